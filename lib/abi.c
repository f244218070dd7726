/* SPDX-License-Identifier: Apache-2.0 */
/* abi.c - how the library keeps vramz.h's compatibility promise.
 *
 * Records only grow at their end, so a program built against an older
 * header knows a prefix of each.  The constructors take the caller's
 * record sizes (vramz_abi); when they differ from the library's, arrays
 * handed out are copied to the caller's stride, and arrays taken in are
 * copied to the library's, the fields the caller does not know left zero
 * (their validity bits clear: unknown).  When the sizes agree, as for
 * every program built with this header, nothing is copied.
 *
 * The 0.1 sizes are computed from the current structs (ABI_SIZE_UPTO the
 * last field 0.1 had), and tests/abi builds a program against 0.1's own
 * header to prove them.
 */
#include "abi.h"
#include "grow.h"
#include "vramz/diagnose.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const vramz_abi abi_v0 = {
	sizeof(vramz_abi),
	ABI_SIZE_UPTO(vramz_gpu_info, temp_gpu_max_c),
	ABI_SIZE_UPTO(vramz_gpu_sample, proc_count),
	ABI_SIZE_UPTO(vramz_proc_sample, slurm_job),
	ABI_SIZE_UPTO(vramz_mig_sample, mem_free_bytes),
	ABI_SIZE_UPTO(vramz_snapshot, migs),
	ABI_SIZE_UPTO(vramz_finding, last_update_ms),
};

const vramz_abi abi_lib = {
	sizeof(vramz_abi),        sizeof(vramz_gpu_info),  sizeof(vramz_gpu_sample),
	sizeof(vramz_proc_sample), sizeof(vramz_mig_sample), sizeof(vramz_snapshot),
	sizeof(vramz_finding),
};

static int check_size(size_t *v, size_t lo, size_t hi, const char *name, char *err, size_t errlen)
{
	if (*v == 0)
		*v = hi;
	if (*v >= lo && *v <= hi)
		return 0;
	snprintf(err, errlen,
		 "record size of %s is %zu bytes, this library's is %zu (0.1's %zu): %s", name,
		 *v, hi, lo,
		 *v > hi ? "the program was built against a newer vramz.h than this libvramz"
			 : "not a vramz.h layout");
	return VRAMZ_EINVAL;
}

int abi_init(struct abi_state *st, const vramz_abi *abi, char *err, size_t errlen)
{
	memset(st, 0, sizeof *st);
	st->sz = abi_lib;
	st->same = 1;
	if (!abi)
		return 0;
	st->legacy = abi == &abi_v0;
	/* a vramz_abi only grows too: take what the caller's holds */
	size_t n = abi->size < sizeof st->sz ? abi->size : sizeof st->sz;
	if (n < ABI_SPAN(vramz_abi, size, snapshot)) {
		snprintf(err, errlen, "vramz_abi.size %zu is too small", abi->size);
		return VRAMZ_EINVAL;
	}
	memcpy(&st->sz, abi, n);
	st->sz.size = sizeof st->sz;
	int rc = 0;
	rc |= check_size(&st->sz.gpu_info, abi_v0.gpu_info, abi_lib.gpu_info, "vramz_gpu_info", err, errlen);
	rc |= check_size(&st->sz.gpu_sample, abi_v0.gpu_sample, abi_lib.gpu_sample, "vramz_gpu_sample", err, errlen);
	rc |= check_size(&st->sz.proc_sample, abi_v0.proc_sample, abi_lib.proc_sample, "vramz_proc_sample", err, errlen);
	rc |= check_size(&st->sz.mig_sample, abi_v0.mig_sample, abi_lib.mig_sample, "vramz_mig_sample", err, errlen);
	rc |= check_size(&st->sz.snapshot, abi_v0.snapshot, abi_lib.snapshot, "vramz_snapshot", err, errlen);
	rc |= check_size(&st->sz.finding, abi_v0.finding, abi_lib.finding, "vramz_finding", err, errlen);
	if (rc)
		return VRAMZ_EINVAL;
	st->same = !memcmp(&st->sz, &abi_lib, sizeof abi_lib);
	return 0;
}

void abi_free(struct abi_state *st)
{
	free(st->gpus.p);
	free(st->procs.p);
	free(st->migs.p);
	free(st->findings.p);
	free(st->cleared.p);
	memset(st, 0, sizeof *st);
}

int abi_copy_in(void *dst, size_t dst_size, const void *src, size_t min,
		const char *what, char *err, size_t errlen)
{
	size_t size;
	memcpy(&size, src, sizeof size);
	if (size < min) {
		snprintf(err, errlen, "%s.size %zu: set it to sizeof(%s)", what, size, what);
		return VRAMZ_EINVAL;
	}
	/* a newer caller's struct: fine as long as it asks for nothing this
	 * library does not know (the rule of Linux's extensible structs) */
	for (size_t i = dst_size; i < size; i++)
		if (((const unsigned char *)src)[i]) {
			snprintf(err, errlen,
				 "%s: set fields this libvramz does not know (byte %zu of %zu): "
				 "a newer libvramz is needed", what, i, size);
			return VRAMZ_EINVAL;
		}
	memcpy((char *)dst + sizeof size, (const char *)src + sizeof size,
	       (size < dst_size ? size : dst_size) - sizeof size);
	memcpy(dst, &dst_size, sizeof dst_size);
	return 0;
}

const void *abi_restride(struct abi_buf *buf, const void *src, unsigned n,
			 size_t from, size_t to)
{
	if (from == to || n == 0)
		return src;
	if ((size_t)n > SIZE_MAX / to)
		return NULL;
	if (grow_bytes(&buf->p, &buf->cap, (size_t)n * to))
		return NULL;
	size_t keep = from < to ? from : to;
	for (unsigned i = 0; i < n; i++) {
		char *d = (char *)buf->p + (size_t)i * to;
		memcpy(d, (const char *)src + (size_t)i * from, keep);
		if (to > keep)
			memset(d + keep, 0, to - keep);
	}
	return buf->p;
}

const vramz_snapshot *abi_snapshot_out(struct abi_state *st, vramz_snapshot *in)
{
	in->gpu_size = abi_lib.gpu_sample;
	in->proc_size = abi_lib.proc_sample;
	in->mig_size = abi_lib.mig_sample;
	if (st->same)
		return in;
	vramz_snapshot *o = &st->snap;
	*o = *in;
	o->gpu_size = st->sz.gpu_sample;
	o->proc_size = st->sz.proc_sample;
	o->mig_size = st->sz.mig_sample;
	o->gpus = abi_restride(&st->gpus, in->gpus, in->gpu_count, in->gpu_size, o->gpu_size);
	o->procs = abi_restride(&st->procs, in->procs, in->proc_count, in->proc_size, o->proc_size);
	o->migs = abi_restride(&st->migs, in->migs, in->mig_count, in->mig_size, o->mig_size);
	if ((in->gpu_count && !o->gpus) || (in->proc_count && !o->procs) ||
	    (in->mig_count && !o->migs))
		return NULL;
	return o;
}

const vramz_snapshot *abi_snapshot_in(struct abi_state *st, const vramz_snapshot *in)
{
	size_t g = st->sz.gpu_sample, p = st->sz.proc_sample, m = st->sz.mig_sample;
	/* a 0.1 caller's snapshot ends before the stride fields */
	if (!st->legacy) {
		g = in->gpu_size ? in->gpu_size : g;
		p = in->proc_size ? in->proc_size : p;
		m = in->mig_size ? in->mig_size : m;
	}
	if (g == abi_lib.gpu_sample && p == abi_lib.proc_sample && m == abi_lib.mig_sample &&
	    !st->legacy)
		return in;
	if (g < abi_v0.gpu_sample || p < abi_v0.proc_sample || m < abi_v0.mig_sample)
		return NULL;
	vramz_snapshot *o = &st->snap;
	memset(o, 0, sizeof *o);
	memcpy(o, in, st->legacy ? abi_v0.snapshot : sizeof *o);
	o->gpu_size = abi_lib.gpu_sample;
	o->proc_size = abi_lib.proc_sample;
	o->mig_size = abi_lib.mig_sample;
	o->gpus = abi_restride(&st->gpus, in->gpus, in->gpu_count, g, o->gpu_size);
	o->procs = abi_restride(&st->procs, in->procs, in->proc_count, p, o->proc_size);
	o->migs = abi_restride(&st->migs, in->migs, in->mig_count, m, o->mig_size);
	if ((in->gpu_count && !o->gpus) || (in->proc_count && !o->procs) ||
	    (in->mig_count && !o->migs))
		return NULL;
	return o;
}

static const void *nth(const void *base, size_t size, unsigned count, unsigned i)
{
	return base && i < count ? (const char *)base + (size_t)i * size : NULL;
}

const vramz_gpu_sample *vramz_snapshot_gpu(const vramz_snapshot *s, unsigned i)
{
	return s ? nth(s->gpus, s->gpu_size, s->gpu_count, i) : NULL;
}

const vramz_proc_sample *vramz_snapshot_proc(const vramz_snapshot *s, unsigned i)
{
	return s ? nth(s->procs, s->proc_size, s->proc_count, i) : NULL;
}

const vramz_mig_sample *vramz_snapshot_mig(const vramz_snapshot *s, unsigned i)
{
	return s ? nth(s->migs, s->mig_size, s->mig_count, i) : NULL;
}
