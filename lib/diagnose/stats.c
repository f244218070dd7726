/* SPDX-License-Identifier: Apache-2.0 */
/* stats.c - the trend statistics behind the leak detector.
 *
 * Mann-Kendall answers "does this series keep rising?" without assuming a
 * shape or a distribution; its variance is corrected for ties, which are
 * common because memory moves in allocator-sized steps.  Theil-Sen (the
 * median of all pairwise slopes) estimates how fast, unmoved by a single
 * spike, and Sen's method gives a 95 % interval from the same pairs.
 * Medians and interval ranks use selection, not a full sort: O(n^2) pairs
 * once, O(n^2) expected to pick three of them.
 */
#include "stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

double stats_norm_sf(double z)
{
	return 0.5 * erfc(z / sqrt(2.0));
}

static void swapd(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/* Quickselect with a pseudo-random pivot and a three-way partition (slopes
 * of quantized memory have many ties): v[k] is the k-th smallest
 * afterwards, with no larger value before it and no smaller one after. */
static double select_kth(double *v, unsigned n, unsigned k)
{
	size_t lo = 0, hi = n;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ n;
	while (hi - lo > 1) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		double pv = v[lo + (size_t)(rng % (hi - lo))];
		size_t lt = lo, i = lo, gt = hi;
		while (i < gt) {
			if (v[i] < pv)
				swapd(&v[lt++], &v[i++]);
			else if (v[i] > pv)
				swapd(&v[i], &v[--gt]);
			else
				i++;
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return v[k];
	}
	return v[k];
}

double stats_median(double *v, unsigned n)
{
	if (!n)
		return 0;
	double a = select_kth(v, n, n / 2);
	if (n & 1)
		return a;
	/* the largest of the lower half */
	double b = v[0];
	for (unsigned i = 1; i < n / 2; i++)
		if (v[i] > b)
			b = v[i];
	return (a + b) / 2;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void stats_mann_kendall(const double *y, unsigned n, double *tau, double *p_value,
			double *var_s)
{
	double s = 0;
	*tau = 0;
	*p_value = 1;
	*var_s = 0;
	if (n < 3)
		return;
	for (unsigned i = 0; i + 1 < n; i++) {
		double yi = y[i];
		long c = 0;
		for (unsigned j = i + 1; j < n; j++)
			c += (y[j] > yi) - (y[j] < yi);
		s += (double)c;
	}
	/* tie groups, from a sorted copy */
	double *sorted = malloc(n * sizeof *sorted);
	double tie = 0;
	if (sorted) {
		for (unsigned i = 0; i < n; i++)
			sorted[i] = y[i];
		qsort(sorted, n, sizeof *sorted, cmp_double);
		for (unsigned i = 0; i < n;) {
			unsigned j = i + 1;
			while (j < n && sorted[j] == sorted[i])
				j++;
			double t = (double)(j - i);
			if (t > 1)
				tie += t * (t - 1) * (2 * t + 5);
			i = j;
		}
		free(sorted);
	}
	double dn = (double)n;
	double var = (dn * (dn - 1) * (2 * dn + 5) - tie) / 18.0;
	*var_s = var;
	*tau = s / (dn * (dn - 1) / 2);
	if (var <= 0)
		return;
	double z = s > 0 ? (s - 1) / sqrt(var) : s < 0 ? (s + 1) / sqrt(var) : 0;
	*p_value = stats_norm_sf(z);
}

void stats_theil_sen(const double *t, const double *y, unsigned n, double var_s,
		     double *tmp, double *slope, double *lo, double *hi)
{
	unsigned m = 0;
	for (unsigned i = 0; i + 1 < n; i++)
		for (unsigned j = i + 1; j < n; j++) {
			double dt = t[j] - t[i];
			if (dt > 0)
				tmp[m++] = (y[j] - y[i]) / dt;
		}
	*slope = *lo = *hi = 0;
	if (!m)
		return;
	*slope = stats_median(tmp, m);
	double c = 1.959964 * sqrt(var_s > 0 ? var_s : 0);
	double m1 = ((double)m - c) / 2, m2 = ((double)m + c) / 2;
	long k1 = lround(m1) - 1, k2 = lround(m2);
	if (k1 < 0)
		k1 = 0;
	if (k2 > (long)m - 1)
		k2 = (long)m - 1;
	if (k2 < k1)
		k2 = k1;
	*lo = select_kth(tmp, m, (unsigned)k1);
	*hi = select_kth(tmp, m, (unsigned)k2);
}
