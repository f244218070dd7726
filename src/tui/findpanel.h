/* SPDX-License-Identifier: Apache-2.0 */
/* findpanel.h - the dashboard's findings panel, fed by the diagnosis engine
 * (vramz/diagnose.h) that the sampler thread runs: the current findings of
 * the latest tick shown, their sentences, and the marks they leave on the
 * GPUs and processes they name. */
#ifndef VRAMZ_TUI_FINDPANEL_H
#define VRAMZ_TUI_FINDPANEL_H

#include <stddef.h>

#include "tui/model.h"
#include "vramz/diagnose.h"

#define FINDINGS_TEXT_LEN 520

struct findings {
	vramz_finding *v;             /* most severe first; owned */
	unsigned n;
	char (*text)[FINDINGS_TEXT_LEN]; /* "summary. Advice." per finding */
	unsigned cap_text;
};

/* Takes the findings a snapshot carries (s->findings moves to f); a
 * catch-up or failed tick carries none and leaves f as it was. */
void findings_take(struct findings *f, struct tui_snap *s);
/* Marks the GPUs and rows the findings name (worst severity each); call
 * after every model_feed, which forgets the marks. */
void findings_mark(const struct findings *f, struct model *m);
/* A finding's line, the answer first (issue 40): the time to out of
 * memory or to full ahead of the subject, then the summary, then the
 * advice, and the statistics ("95% CI ..., tau ...") last, where a narrow
 * terminal cuts first: "out of memory in about 25m: pid 9 (python3) on
 * GPU 0 grows 3841.9 MiB/min for 5m, now 12.0 GiB.  Look for ...  (95% CI
 * 3841.9-3841.9, tau 1.00)". */
void findings_line(const char *summary, const char *advice, char *out, size_t len);
/* The panel's line of finding i. */
const char *findings_text(const struct findings *f, unsigned i);
void findings_free(struct findings *f);

#endif
