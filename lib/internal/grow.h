/* SPDX-License-Identifier: Apache-2.0 */
/* grow.h - the one way vramz grows an array: double its capacity, from
 * `first` when it is empty.  Internal to the library and the tool, like
 * clock.h. */
#ifndef VRAMZ_GROW_H
#define VRAMZ_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* Returns the reallocated block with *cap updated, or NULL with the old
 * block and *cap as they were (out of memory, or a capacity that would
 * no longer fit an unsigned). */
static inline void *grow_array(void *v, unsigned *cap, unsigned first, size_t elem)
{
	unsigned ncap = *cap ? *cap * 2 : first;
	if (ncap < *cap)
		return NULL;
	void *nv = realloc(v, (size_t)ncap * elem);
	if (nv)
		*cap = ncap;
	return nv;
}

/* Makes the block at *p (of *cap bytes) hold at least need bytes, for a
 * buffer kept from one call to the next: 0, or -1 with *p and *cap as
 * they were (out of memory). */
static inline int grow_bytes(void **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	void *np = realloc(*p, need);
	if (!np)
		return -1;
	*p = np;
	*cap = need;
	return 0;
}

#endif
