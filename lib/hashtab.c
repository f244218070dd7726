/* SPDX-License-Identifier: Apache-2.0 */
/* hashtab.c - the library's one open-addressing hash table (hashtab.h):
 * the probing, growth and deletion that the /proc cache, the job keys and
 * the engine's process series used to write out three times, each with
 * its own load factor and its own subtle deletion.
 *
 * Linear probing keeps a lookup to a cache line or two; Fibonacci hashing
 * (the high bits of key * 2^64/phi) spreads keys such as consecutive pids
 * whose low bits alone would cluster; deletion shifts the rest of the
 * probe chain back instead of leaving tombstones, so a table that sees
 * processes come and go for weeks never degrades.
 *
 * The process index at the end is the one key the engine, analyze and
 * the report share: (GPU, pid, start time) to a record's position.
 */
#include "hashtab.h"

#include <stdlib.h>
#include <string.h>

#define HTAB_FIRST_BITS 6

void htab_init(struct htab *t, size_t esz, uint64_t (*hash)(const void *e),
	       int (*used)(const void *e))
{
	memset(t, 0, sizeof *t);
	t->esz = esz;
	t->hash = hash;
	t->used = used;
}

void htab_free(struct htab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->bits = t->count = 0;
}

static unsigned home(const struct htab *t, uint64_t h)
{
	return (unsigned)((h * 0x9e3779b97f4a7c15ull) >> (64 - t->bits));
}

unsigned htab_find(const struct htab *t, uint64_t h, htab_match_fn match, const void *key)
{
	unsigned mask = (1u << t->bits) - 1, i = home(t, h);
	for (;;) {
		const void *e = htab_at(t, i);
		if (!t->used(e) || match(e, key))
			return i;
		i = (i + 1) & mask;
	}
}

/* The empty slot for a used entry being moved into a fresh table. */
static unsigned free_slot(const struct htab *t, const void *e)
{
	unsigned mask = (1u << t->bits) - 1, i = home(t, t->hash(e));
	while (t->used(htab_at(t, i)))
		i = (i + 1) & mask;
	return i;
}

int htab_rebuild(struct htab *t, unsigned bits, int (*keep)(const void *e, void *arg),
		 void *arg)
{
	if (bits < 1 || bits > 30)
		return -1;
	void *old = t->slots;
	unsigned ocap = htab_cap(t), obits = t->bits, ocount = t->count;
	if (!(t->slots = calloc((size_t)1 << bits, t->esz))) {
		t->slots = old;
		return -1;
	}
	t->bits = bits;
	t->count = 0;
	for (unsigned i = 0; i < ocap; i++) {
		const void *e = (const char *)old + (size_t)i * t->esz;
		if (!t->used(e) || (keep && !keep(e, arg)))
			continue;
		if (t->count + 1 >= 1u << bits) {
			/* too small to keep an empty slot: keep the old table */
			free(t->slots);
			t->slots = old;
			t->bits = obits;
			t->count = ocount;
			return -1;
		}
		memcpy(htab_at(t, free_slot(t, e)), e, t->esz);
		t->count++;
	}
	free(old);
	return 0;
}

int htab_reserve(struct htab *t, unsigned max_bits)
{
	if (!t->slots)
		return htab_rebuild(t, HTAB_FIRST_BITS < max_bits ? HTAB_FIRST_BITS : max_bits,
				    NULL, NULL);
	if ((t->count + 1) * 2 <= 1u << t->bits)
		return 0;
	if (t->bits < max_bits && htab_rebuild(t, t->bits + 1, NULL, NULL) == 0)
		return 0;
	/* past half but not full: still usable, probes just grow longer */
	return t->count + 1 < 1u << t->bits ? 0 : -1;
}

void htab_clear(struct htab *t)
{
	if (t->slots)
		memset(t->slots, 0, (size_t)htab_cap(t) * t->esz);
	t->count = 0;
}

void htab_delete(struct htab *t, unsigned hole)
{
	unsigned mask = (1u << t->bits) - 1, j = hole;
	for (;;) {
		j = (j + 1) & mask;
		void *e = htab_at(t, j);
		if (!t->used(e))
			break;
		/* the entry at j may fill the hole if its home is not in (hole, j] */
		if (((j - home(t, t->hash(e))) & mask) >= ((j - hole) & mask)) {
			memcpy(htab_at(t, hole), e, t->esz);
			hole = j;
		}
	}
	memset(htab_at(t, hole), 0, t->esz);
	t->count--;
}

/* ---- the process index ---- */

static uint64_t pkey_hash(const void *e)
{
	const struct htab_pkey *k = e;
	return htab_mix(htab_mix(htab_mix(HTAB_SEED, k->gpu), k->pid), k->start_ticks);
}

static int pkey_used(const void *e)
{
	return ((const struct htab_pkey *)e)->idx1 != 0;
}

static int pkey_match(const void *e, const void *key)
{
	const struct htab_pkey *a = e, *b = key;
	return a->pid == b->pid && a->gpu == b->gpu && a->start_ticks == b->start_ticks;
}

void htab_pkey_init(struct htab *t)
{
	htab_init(t, sizeof(struct htab_pkey), pkey_hash, pkey_used);
}

unsigned htab_pkey_get(const struct htab *t, unsigned gpu, uint32_t pid, uint64_t start_ticks)
{
	if (!t->slots)
		return 0;
	struct htab_pkey k = {0, pid, gpu, start_ticks};
	return ((const struct htab_pkey *)htab_at(t, htab_find(t, pkey_hash(&k), pkey_match, &k)))
		->idx1;
}

int htab_pkey_put(struct htab *t, unsigned gpu, uint32_t pid, uint64_t start_ticks,
		  unsigned index)
{
	struct htab_pkey k = {index + 1, pid, gpu, start_ticks};
	if (!t->esz)
		htab_pkey_init(t);
	if (htab_reserve(t, 30))
		return -1;
	*(struct htab_pkey *)htab_at(t, htab_find(t, pkey_hash(&k), pkey_match, &k)) = k;
	htab_added(t);
	return 0;
}
