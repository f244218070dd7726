/* SPDX-License-Identifier: Apache-2.0 */
/* zoom.c - the range a memory chart shows (zoom.h): the used range with a
 * margin, rounded to steps an axis can label, reaching up to the total
 * only when the data comes near it.  Numbers only: the callers draw. */
#include "format/zoom.h"

#include <math.h>

double zoom_nice_up(double raw)
{
	static const double m[] = {1, 2, 2.5, 5, 10};
	double e = 1;
	if (!(raw > 0))
		return 1;
	while (e * 10 <= raw)
		e *= 10;
	while (e > raw)
		e /= 10;
	for (unsigned i = 0; i < sizeof m / sizeof m[0]; i++)
		if (m[i] * e >= raw * (1 - 1e-9))
			return m[i] * e;
	return 10 * e;
}

int zoom_range(double min, double max, double total, double min_units, double *lo, double *hi)
{
	if (!(max >= min)) { /* nothing known */
		*lo = 0;
		*hi = total > 0 ? total : 1;
		return total > 0;
	}
	double floor_span = total > 0 ? total * ZOOM_MIN_SPAN : 0;
	if (floor_span < min_units)
		floor_span = min_units;
	double span = max - min, pad = span / 10;
	if (span + 2 * pad < floor_span)
		pad = (floor_span - span) / 2;
	double a = min - pad, b = max + pad;
	if (a < 0) {
		b -= a;
		a = 0;
	}
	double step = zoom_nice_up((b - a) / 4);
	a = floor(a / step + 1e-9) * step;
	b = ceil(b / step - 1e-9) * step;
	if (total > 0 && b >= total * 0.9) {
		*lo = a < total ? a : 0;
		*hi = total;
		return 1;
	}
	*lo = a;
	*hi = b;
	return 0;
}
