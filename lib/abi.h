/* SPDX-License-Identifier: Apache-2.0 */
/* abi.h - the library's side of the ABI promise (vramz.h, docs/api.md):
 * reading caller-sized structs, and handing arrays out (or taking them
 * in) at the record sizes the caller was compiled with.  Internal. */
#ifndef VRAMZ_ABI_H
#define VRAMZ_ABI_H

#include "vramz/vramz.h"

#include <stddef.h>

/* The size a struct had when its last field of that version was `last`:
 * true while every field appended later is no more aligned than the
 * struct already was (no long double, no SIMD types). */
#define ABI_SIZE_UPTO(T, last)                                                   \
	((offsetof(T, last) + sizeof(((T *)0)->last) + _Alignof(T) - 1) /          \
	 _Alignof(T) * _Alignof(T))
/* The bytes of a sized struct from field `first` up to the end of `last`. */
#define ABI_SPAN(T, first, last) \
	(offsetof(T, last) + sizeof(((T *)0)->last) - offsetof(T, first))

/* The record sizes of 0.1, the smallest a caller may declare, and the
 * library's own.  Passing &abi_v0 to a constructor marks a 0.1 caller:
 * its snapshots have no stride fields to read. */
extern const vramz_abi abi_v0;
extern const vramz_abi abi_lib;

struct abi_buf {
	void *p;
	size_t cap; /* bytes */
};

/* Per object (context, log reader, diagnosis engine): the caller's sizes
 * and the buffers that hold arrays re-strided for it. */
struct abi_state {
	vramz_abi sz;          /* the caller's, zeros resolved to the library's */
	int legacy;            /* a 0.1 caller */
	int same;              /* every size equals the library's: no copies */
	vramz_snapshot snap;   /* a snapshot at the caller's strides */
	struct abi_buf gpus, procs, migs, findings, cleared;
};

/* Checks abi (NULL: the library's sizes) into st; VRAMZ_EINVAL with err
 * naming the record when a size is below 0.1's or above the library's. */
int abi_init(struct abi_state *st, const vramz_abi *abi, char *err, size_t errlen);
void abi_free(struct abi_state *st);

/* Copies a caller-sized struct (its size_t `size` first) into dst, which
 * holds the defaults: the caller's bytes up to its size replace them, a
 * larger caller's extra bytes must be zero.  min: the first sized
 * version's size.  VRAMZ_EINVAL with err on a bad size. */
int abi_copy_in(void *dst, size_t dst_size, const void *src, size_t min,
		const char *what, char *err, size_t errlen);

/* Copies n records of stride `from` into buf at stride `to` (truncating
 * fields the caller does not know, or zero-filling those it lacks).
 * Returns the array, src itself when the strides are equal, NULL on out of
 * memory. */
const void *abi_restride(struct abi_buf *buf, const void *src, unsigned n,
			 size_t from, size_t to);

/* A library snapshot (library strides) as the caller wants it: in itself
 * (with the stride fields set) or st->snap.  NULL on out of memory. */
const vramz_snapshot *abi_snapshot_out(struct abi_state *st, vramz_snapshot *in);
/* A caller's snapshot at the library's strides (into st's buffers when
 * they differ).  NULL on out of memory. */
const vramz_snapshot *abi_snapshot_in(struct abi_state *st, const vramz_snapshot *in);

#endif
