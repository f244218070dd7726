/* SPDX-License-Identifier: Apache-2.0 */
/* torchfigs.h - the one list of the PyTorch agent's figures of a process
 * (docs/python.md), from which every table that names them is generated:
 * lib/agent.c's torch_fields (the agent file's figure each is read from,
 * and the "torch" object of the JSON documents, in this order) and the
 * agent rows of lib/procfields.c (the log's process columns and the
 * exporter's series, for the figures marked LOG, in this order).  The
 * Python package's copy (python/vramz/_fields.py, TORCH_FIGURES) is
 * checked equal to this list by tests/python/test_fields.py, which reads
 * this file: keep one X(...) per line.
 *
 * X(LOG|NOLOG, key, VRAMZ_T_ bit, agent_stat, metric, counter, help):
 *   key     the JSON key under "torch"; the member is torch_KEY and the
 *           log column "torch_KEY"
 *   stat    the figure of the agent file it comes from (lib/internal/agent.h)
 *   metric  Prometheus name without vramz_ (LOG rows only)
 * The log's process columns follow this order, so old logs keep reading
 * only if rows are appended: a new figure, LOG or not, goes at the end. */
#ifndef VRAMZ_TORCHFIGS_H
#define VRAMZ_TORCHFIGS_H

#define VRAMZ_TORCH_FIGURES(X)                                                                 \
	X(LOG, allocated_bytes, VRAMZ_T_ALLOCATED, AS_ALLOCATED, "process_torch_allocated_bytes", 0, \
	  "Memory of live tensors in the process's PyTorch caching allocator on the GPU "        \
	  "(its vramz agent).")                                                                 \
	X(LOG, reserved_bytes, VRAMZ_T_RESERVED, AS_RESERVED, "process_torch_reserved_bytes", 0,    \
	  "Memory the process's PyTorch caching allocator holds from the driver on the GPU.")    \
	X(NOLOG, active_bytes, VRAMZ_T_ACTIVE, AS_ACTIVE, NULL, 0, NULL)                            \
	X(LOG, inactive_split_bytes, VRAMZ_T_INACTIVE_SPLIT, AS_INACTIVE_SPLIT,                    \
	  "process_torch_inactive_split_bytes", 0,                                              \
	  "Free pieces of split blocks in the PyTorch allocator (fragmentation).")              \
	X(NOLOG, peak_allocated_bytes, VRAMZ_T_PEAK_ALLOCATED, AS_PEAK_ALLOCATED, NULL, 0, NULL)    \
	X(LOG, alloc_retries, VRAMZ_T_RETRIES, AS_RETRIES, "process_torch_alloc_retries_total", 1,  \
	  "PyTorch allocations that freed the allocator's cache and retried.")                  \
	X(LOG, ooms, VRAMZ_T_OOMS, AS_OOMS, "process_torch_ooms_total", 1,                          \
	  "Out-of-memory errors the process's PyTorch allocator raised.")                       \
	X(NOLOG, allocations, VRAMZ_T_ALLOCATIONS, AS_ALLOCATIONS, NULL, 0, NULL)

#endif
