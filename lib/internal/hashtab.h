/* SPDX-License-Identifier: Apache-2.0 */
/* hashtab.h - the one open-addressing hash table of the library (as
 * grow.h is its one way to grow an array): a power-of-two array of the
 * caller's own entries, linear probing from a Fibonacci-hashed home,
 * growth past half full, backward-shift deletion (no tombstones).
 *
 * The caller's entry type holds its key; the table knows it by its size
 * and two callbacks given at init: the hash of an entry's key, and
 * whether a slot is used (an all-zero entry must read as unused).
 * Lookups pass the key's hash and a match function, and get the slot
 * holding the key or the empty slot where it belongs:
 *
 *     unsigned i = htab_find(&t, h, match, &key);
 *     struct e *e = htab_at(&t, i);
 *     if (!t.used(e)) { fill *e; htab_added(&t); }
 *
 * Internal to the library and the tool: the /proc cache (proc.c), the job
 * keys (diagnose/jobkey.c) and, through the process index below, the
 * engine's process series (diagnose/engine.c) and analyze's processes
 * (src/analyze/procs.c).
 */
#ifndef VRAMZ_HASHTAB_H
#define VRAMZ_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

struct htab {
	void *slots;                  /* 1 << bits entries of esz bytes; NULL empty */
	size_t esz;
	unsigned bits, count;
	uint64_t (*hash)(const void *e); /* of a used entry's key */
	int (*used)(const void *e);
};

typedef int (*htab_match_fn)(const void *e, const void *key);

/* An empty table (no allocation until the first htab_reserve). */
void htab_init(struct htab *t, size_t esz, uint64_t (*hash)(const void *e),
	       int (*used)(const void *e));
void htab_free(struct htab *t);

static inline unsigned htab_cap(const struct htab *t)
{
	return t->slots ? 1u << t->bits : 0;
}

static inline void *htab_at(const struct htab *t, unsigned i)
{
	return (char *)t->slots + (size_t)i * t->esz;
}

/* Makes room for one more entry: grows (rehashing every entry) when that
 * entry would fill the table past half, but not beyond 1 << max_bits
 * slots.  0, or -1 when it could not (out of memory, or at max_bits and
 * full): the table is unchanged and still valid. */
int htab_reserve(struct htab *t, unsigned max_bits);

/* The slot of the entry matching key, or the empty slot where it belongs.
 * The table must have a free slot (htab_reserve, or a lookup only after
 * one). */
unsigned htab_find(const struct htab *t, uint64_t h, htab_match_fn match, const void *key);

/* After filling an empty slot htab_find returned. */
static inline void htab_added(struct htab *t)
{
	t->count++;
}

/* Forgets every entry, keeping the table's size. */
void htab_clear(struct htab *t);

/* Empties slot i, shifting later entries of its probe chain back: the
 * entry now at i (if any) is one not yet seen by a pass going upward. */
void htab_delete(struct htab *t, unsigned i);

/* Rebuilds the table at 1 << bits slots with the entries keep() accepts
 * (keep NULL: all).  0, or -1 out of memory with the table unchanged. */
int htab_rebuild(struct htab *t, unsigned bits, int (*keep)(const void *e, void *arg),
		 void *arg);

/* Mixes v into a running hash (FNV-1a step on the whole word). */
static inline uint64_t htab_mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 1099511628211ull;
}
#define HTAB_SEED 1469598103934665603ull

/* ---- the process index ----
 * Arrays of per-process records keyed as the engine keys a process: GPU,
 * pid and start time (0 for a process not visible).  The index maps a key
 * to its record's position in the caller's array.  A zeroed struct htab
 * is an empty process index too (htab_pkey_init is then optional). */
struct htab_pkey {
	uint32_t idx1;                /* the record's index + 1; 0: empty slot */
	uint32_t pid;
	unsigned gpu;
	uint64_t start_ticks;
};

void htab_pkey_init(struct htab *t);
/* The index of the record with that key + 1; 0: none. */
unsigned htab_pkey_get(const struct htab *t, unsigned gpu, uint32_t pid, uint64_t start_ticks);
/* Adds a key not yet in the index for the record at index.  0, or -1 out
 * of memory (the index unchanged). */
int htab_pkey_put(struct htab *t, unsigned gpu, uint32_t pid, uint64_t start_ticks,
		  unsigned index);

#endif
