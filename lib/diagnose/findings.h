/* SPDX-License-Identifier: Apache-2.0 */
/* findings.h - the findings' identity, merging and keeping (findings.c),
 * what the engine asks at an evaluation.  Not installed. */
#ifndef VRAMZ_DIAG_FINDINGS_H
#define VRAMZ_DIAG_FINDINGS_H

#include "vramz/diagnose.h"

/* Every detector run, their findings merged with those standing (ids,
 * revisions, holds, report_after_ms) and the reported ones published in
 * d->out on the wall clock; d->dirty cleared.  0 or VRAMZ_ENOMEM. */
int findings_evaluate(vramz_diag *d);

#endif
