/* SPDX-License-Identifier: Apache-2.0 */
/* stats.h - the trend statistics (stats.c) behind the leak rules: a leaf
 * of lib/diagnose's graph. */
#ifndef VRAMZ_DIAG_STATS_H
#define VRAMZ_DIAG_STATS_H

struct trend {
	double tau, p_value;           /* Mann-Kendall, one-sided rising */
	double slope, ci_low, ci_high; /* Theil-Sen, units of y per unit of t, 95 % */
};

/* Mann-Kendall with tie correction over y[0..n-1] (in time order). */
void stats_mann_kendall(const double *y, unsigned n, double *tau, double *p_value,
			double *var_s);
/* Theil-Sen slope and Sen's 95 % interval; tmp holds n*(n-1)/2 doubles. */
void stats_theil_sen(const double *t, const double *y, unsigned n, double var_s,
		     double *tmp, double *slope, double *lo, double *hi);
double stats_median(double *v, unsigned n); /* reorders v */
double stats_norm_sf(double z);            /* 1 - Phi(z) */

#endif
