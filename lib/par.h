/* SPDX-License-Identifier: Apache-2.0 */
/* par.h - run one function per GPU on threads, for work whose cost is
 * latency inside the driver (attaching a GPU: 6.7 ms; the first read of
 * utilization: 3.7 ms; PCIe throughput: 20 ms), so N GPUs cost about the
 * time of one instead of N times it. */
#ifndef VRAMZ_PAR_H
#define VRAMZ_PAR_H

/* Calls fn(arg, i) for i in [0, n), on up to n threads; serially when n is
 * 1 or a thread cannot be created.  Returns when all calls have returned. */
void par_for(unsigned n, void (*fn)(void *arg, unsigned i), void *arg);

#endif
