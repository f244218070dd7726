/* SPDX-License-Identifier: Apache-2.0 */
/* test_hashtab.c - the library's one open-addressing table (lib/internal/hashtab.h):
 * every key put in is found again, through growth, deletions that shift
 * probe chains (the sweep pattern of the /proc cache), a rebuild that
 * keeps only some entries, and a table held at its maximum size; and the
 * process index (GPU, pid, start time -> record) that the engine and
 * analyze keep over their arrays. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "hashtab.h"

struct ent {
	uint32_t pid; /* 0: unused */
	uint32_t gen;
	uint64_t start;
};

static uint64_t ent_hash(const void *e)
{
	const struct ent *x = e;
	return htab_mix(htab_mix(HTAB_SEED, x->pid), x->start);
}

static int ent_used(const void *e)
{
	return ((const struct ent *)e)->pid != 0;
}

static int ent_match(const void *e, const void *key)
{
	const struct ent *a = e, *b = key;
	return a->pid == b->pid && a->start == b->start;
}

static struct ent *put(struct htab *t, uint32_t pid, uint64_t start)
{
	struct ent k = {pid, 0, start};
	assert_int_equal(htab_reserve(t, 20), 0);
	struct ent *e = htab_at(t, htab_find(t, ent_hash(&k), ent_match, &k));
	if (!e->pid) {
		*e = k;
		htab_added(t);
	}
	return e;
}

static struct ent *get(struct htab *t, uint32_t pid, uint64_t start)
{
	struct ent k = {pid, 0, start};
	if (!t->slots)
		return NULL;
	struct ent *e = htab_at(t, htab_find(t, ent_hash(&k), ent_match, &k));
	return e->pid ? e : NULL;
}

static void test_put_find_grow(void **state)
{
	struct htab t;
	htab_init(&t, sizeof(struct ent), ent_hash, ent_used);
	/* consecutive pids, and one pid with many start times (reused pids) */
	for (uint32_t p = 1; p <= 5000; p++)
		put(&t, p, p * 7);
	for (uint64_t s = 1; s <= 100; s++)
		put(&t, 4242, 1000000 + s);
	assert_int_equal(t.count, 5100);
	assert_true(htab_cap(&t) >= 2 * t.count);
	for (uint32_t p = 1; p <= 5000; p++)
		assert_non_null(get(&t, p, p * 7));
	assert_null(get(&t, 1, 8));
	assert_null(get(&t, 5001, 5001 * 7));
	/* the same key again is the same entry, not a second one */
	put(&t, 17, 17 * 7)->gen = 9;
	assert_int_equal(t.count, 5100);
	assert_int_equal(get(&t, 17, 17 * 7)->gen, 9);
	htab_free(&t);
}

static void test_sweep_deletes(void **state)
{
	struct htab t;
	htab_init(&t, sizeof(struct ent), ent_hash, ent_used);
	for (uint32_t p = 1; p <= 3000; p++)
		put(&t, p, 0)->gen = p % 3 == 0; /* a third are "seen this tick" */
	/* the /proc cache's sweep: one upward pass, deleting stale entries;
	 * an entry shifted back into slot i is examined again there */
	for (unsigned i = 0; i < htab_cap(&t); i++)
		while (((struct ent *)htab_at(&t, i))->pid && !((struct ent *)htab_at(&t, i))->gen)
			htab_delete(&t, i);
	assert_int_equal(t.count, 1000);
	for (uint32_t p = 1; p <= 3000; p++)
		if (p % 3 == 0)
			assert_non_null(get(&t, p, 0));
		else
			assert_null(get(&t, p, 0));
	htab_free(&t);
}

static int keep_even(const void *e, void *arg)
{
	(void)arg;
	return ((const struct ent *)e)->pid % 2 == 0;
}

static void test_rebuild_keeps(void **state)
{
	struct htab t;
	htab_init(&t, sizeof(struct ent), ent_hash, ent_used);
	for (uint32_t p = 1; p <= 200; p++)
		put(&t, p, 1);
	assert_int_equal(htab_rebuild(&t, t.bits, keep_even, NULL), 0);
	assert_int_equal(t.count, 100);
	assert_non_null(get(&t, 200, 1));
	assert_null(get(&t, 199, 1));
	/* a size too small for what it keeps is refused, the table intact */
	assert_int_equal(htab_rebuild(&t, 5, NULL, NULL), -1);
	assert_int_equal(t.count, 100);
	assert_non_null(get(&t, 2, 1));
	htab_free(&t);
}

static void test_max_bits(void **state)
{
	struct htab t;
	htab_init(&t, sizeof(struct ent), ent_hash, ent_used);
	unsigned n = 0;
	for (uint32_t p = 1; p <= 100; p++) {
		if (htab_reserve(&t, 4) < 0)
			break; /* full: the caller goes on uncached */
		struct ent k = {p, 0, 0};
		*(struct ent *)htab_at(&t, htab_find(&t, ent_hash(&k), ent_match, &k)) = k;
		htab_added(&t);
		n++;
	}
	assert_int_equal(htab_cap(&t), 16);
	assert_int_equal(n, 15); /* one slot always stays empty */
	for (uint32_t p = 1; p <= 15; p++)
		assert_non_null(get(&t, p, 0));
	htab_free(&t);
}

static void test_pkey_index(void **state)
{
	struct htab t = {0}; /* zeroed: an empty index, as analyze keeps it */
	assert_int_equal(htab_pkey_get(&t, 0, 1, 0), 0);
	unsigned n = 0;
	/* the same pid on two GPUs, and a reused pid (a new start time) */
	for (unsigned gpu = 0; gpu < 8; gpu++)
		for (uint32_t pid = 100; pid < 600; pid++)
			assert_int_equal(htab_pkey_put(&t, gpu, pid, 1000 + pid, n++), 0);
	assert_int_equal(htab_pkey_put(&t, 3, 150, 77, n++), 0);
	assert_int_equal(t.count, n);
	assert_int_equal(htab_pkey_get(&t, 0, 100, 1100), 1);
	assert_int_equal(htab_pkey_get(&t, 7, 599, 1599), 8 * 500);
	assert_int_equal(htab_pkey_get(&t, 3, 150, 77), n);
	assert_int_equal(htab_pkey_get(&t, 3, 150, 1150), 3 * 500 + 50 + 1);
	assert_int_equal(htab_pkey_get(&t, 8, 100, 1100), 0);  /* another GPU */
	assert_int_equal(htab_pkey_get(&t, 0, 100, 1101), 0);  /* another start */
	/* the engine after evicting: cleared and refilled with new positions,
	 * at its size (fewer entries: no growth) */
	unsigned cap = htab_cap(&t);
	htab_clear(&t);
	for (uint32_t pid = 100; pid < 600; pid += 2)
		assert_int_equal(htab_pkey_put(&t, 1, pid, 1000 + pid, (pid - 100) / 2), 0);
	assert_int_equal(htab_cap(&t), cap);
	assert_int_equal(htab_pkey_get(&t, 1, 102, 1102), 2);
	assert_int_equal(htab_pkey_get(&t, 1, 101, 1101), 0);
	assert_int_equal(htab_pkey_get(&t, 0, 100, 1100), 0);
	htab_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_find_grow),
		cmocka_unit_test(test_sweep_deletes),
		cmocka_unit_test(test_rebuild_keeps),
		cmocka_unit_test(test_max_bits),
		cmocka_unit_test(test_pkey_index),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
