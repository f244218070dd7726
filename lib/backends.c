/* SPDX-License-Identifier: Apache-2.0 */
/* backends.c - every backend, in probe order: one list of C shows which
 * exist (adding one is a row here: backend.h, docs/architecture.md).
 *
 * Its own file, below the context and above the backends: ctx.c walks
 * the table, each backend calls only down (vec.c), and no backend and
 * ctx.c call into each other.
 *
 * Recorded sources come first: the first whose wanted() accepts the open
 * options is opened alone (the daemon's segment, asked for by
 * vramz_open_daemon; a log, by replay_path).  Otherwise every live
 * backend is opened and each that finds GPUs kept.
 */
#include "backend.h"

const struct backend_ops *const backends[] = {
	&backend_segment,
	&backend_replay,
	&backend_nvml,
	&backend_amdgpu,
};
const unsigned backends_count = sizeof backends / sizeof backends[0];
