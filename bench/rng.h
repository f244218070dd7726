/* SPDX-License-Identifier: Apache-2.0 */
/* rng.h - the benchmarks' reproducible noise: xorshift64 and a Gaussian
 * from it (Box-Muller), so a table is the same on every run. */
#ifndef VRAMZ_BENCH_RNG_H
#define VRAMZ_BENCH_RNG_H

#include <math.h>
#include <stdint.h>

static inline double bench_gauss(uint64_t *rng)
{
	double u[2];
	for (int i = 0; i < 2; i++) {
		*rng ^= *rng << 13;
		*rng ^= *rng >> 7;
		*rng ^= *rng << 17;
		u[i] = (double)(*rng >> 11) / 9007199254740992.0;
	}
	return sqrt(-2 * log(u[0] < 1e-300 ? 1e-300 : u[0])) * cos(2 * M_PI * u[1]);
}

#endif
