/* SPDX-License-Identifier: Apache-2.0 */
/* recorded.h - what the backends that hand out a snapshot taken elsewhere
 * share: a log's tick (lib/log/replay.c) and a daemon's segment
 * (lib/backend/segment.c) answer sample() and procs() from it alike. */
#ifndef VRAMZ_BACKEND_RECORDED_H
#define VRAMZ_BACKEND_RECORDED_H

#include "backend.h"

/* GPU idx's sample in s (s may be NULL); NULL when s lacks it. */
const vramz_gpu_sample *recorded_gpu(const vramz_snapshot *s, unsigned idx);
/* sample(): GPU idx as recorded, less its process slice (the context
 * sets that from procs()).  VRAMZ_ENOTFOUND when not in s (unknown, not
 * lost), VRAMZ_ELOST when it was recorded lost. */
int recorded_sample(const vramz_snapshot *s, unsigned idx, vramz_gpu_sample *out);
/* procs(): appends GPU idx's recorded processes to out;
 * VRAMZ_EUNSUPPORTED when its list was not recorded. */
int recorded_procs(const vramz_snapshot *s, unsigned idx, struct proc_vec *out);

#endif
