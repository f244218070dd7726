/* SPDX-License-Identifier: Apache-2.0 */
/* segment_codec.c - the segment's records (docs/daemon.md, "Records")
 * to and from the library's structs.
 *
 * Each record kind is one X-macro list of (offset, field) from which both
 * directions are generated, so the encoder and the decoder cannot disagree
 * about an offset; the lists are the layout docs/daemon.md documents.  The
 * GPU sample's list is lib/fields.c's table itself (each row's seg_off).
 * Offsets only ever get appended (a new minor version); the structs may
 * grow fields the segment does not carry, which decode leaves zero.
 */
#include "segment_codec.h"

#include <string.h>

#include "fields.h"

static uint64_t f64_bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u;
}

static double bits_f64(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

#define E_U32(off, f) seg_put32(p, off, (uint32_t)x->f);
#define E_I32(off, f) seg_put32(p, off, (uint32_t)(int32_t)x->f);
#define E_U64(off, f) seg_put64(p, off, (uint64_t)x->f);
#define E_I64(off, f) seg_put64(p, off, (uint64_t)(int64_t)x->f);
#define E_F64(off, f) seg_put64(p, off, f64_bits(x->f));
#define E_STR(off, size, f) seg_putstr(p, off, (size) < sizeof x->f ? (size) : sizeof x->f, x->f);
#define D_U32(off, f) x->f = seg_get32(p, off);
#define D_I32(off, f) x->f = (int32_t)seg_get32(p, off);
#define D_U64(off, f) x->f = seg_get64(p, off);
#define D_I64(off, f) x->f = (int64_t)seg_get64(p, off);
#define D_F64(off, f) x->f = bits_f64(seg_get64(p, off));
#define D_STR(off, size, f) seg_getstr(p, off, size, x->f, sizeof x->f);

/* ---- static facts of a GPU: 512 bytes ---- */
#define GPU_INFO_FIELDS(U32, I32, U64, STR)                                         \
	U32(0, index) U32(4, valid) STR(8, 96, name) STR(104, 96, uuid)              \
	STR(200, 32, pci_bus_id) STR(232, 32, serial) STR(264, 32, vbios)            \
	STR(296, 16, arch) STR(312, 16, mem_type) U32(328, cc_major)                 \
	U32(332, cc_minor) U64(336, mem_total_bytes) U64(344, bar1_total_bytes)      \
	U32(352, mem_bus_width_bits) U32(356, max_mem_clock_mhz)                     \
	U32(360, max_sm_clock_mhz) U64(368, bandwidth_bytes_per_s)                   \
	U32(376, pcie_max_gen) U32(380, pcie_max_width) U32(384, nvlink_count)       \
	U32(388, mig_current) U32(392, mig_pending) U32(396, ecc_current)            \
	U32(400, ecc_pending) U32(404, persistence) U32(408, power_default_limit_mw) \
	U32(412, power_min_limit_mw) U32(416, power_max_limit_mw)                    \
	I32(420, temp_shutdown_c) I32(424, temp_slowdown_c) I32(428, temp_mem_max_c) \
	I32(432, temp_gpu_max_c)                                                     \
	/* 1.1 */ STR(440, 16, vendor)
#define GPU_INFO_PRESENT 436

void seg_enc_gpu_info(unsigned char *p, const vramz_gpu_info *x, int present)
{
	memset(p, 0, SEG_GPU_INFO_SIZE);
	GPU_INFO_FIELDS(E_U32, E_I32, E_U64, E_STR)
	seg_put32(p, GPU_INFO_PRESENT, present ? 1 : 0);
}

void seg_dec_gpu_info(const unsigned char *p, vramz_gpu_info *x, int *present)
{
	memset(x, 0, sizeof *x);
	GPU_INFO_FIELDS(D_U32, D_I32, D_U64, D_STR)
	*present = seg_get32(p, GPU_INFO_PRESENT) == 1;
}

/* ---- a GPU's sample: 256 bytes (192 before 1.2) ----
 * The offsets are lib/fields.c's: each field's row and the frame's rows
 * (index, valid, lost, the process slice) carry theirs, so a field added
 * there is in the record without a line here. */

static void enc_member(unsigned char *p, const struct field *f, const vramz_gpu_sample *x)
{
	int64_t v = field_get(f, x);
	if (f->type == FT_U64)
		seg_put64(p, f->seg_off, (uint64_t)v);
	else /* an int as its two's complement, as E_I32 */
		seg_put32(p, f->seg_off, (uint32_t)v);
}

static int64_t dec_member(const unsigned char *p, const struct field *f)
{
	switch (f->type) {
	case FT_U64: return (int64_t)seg_get64(p, f->seg_off);
	case FT_UINT: return seg_get32(p, f->seg_off);
	case FT_INT: return (int32_t)seg_get32(p, f->seg_off);
	}
	return 0;
}

/* Whether a record of size bytes carries the member: it fits, and a 1.0 or
 * 1.1 record (192 bytes) carries nothing from SEG_GPU_SAMPLE_10_END on (its
 * reserved zeros, where 1.2 put the VRAM health) */
static int record_holds(uint64_t size, const struct field *f)
{
	if (f->seg_off + field_width(f) > size)
		return 0;
	return f->seg_off < SEG_GPU_SAMPLE_10_END || size > SEG_GPU_SAMPLE_MIN_SIZE;
}

void seg_enc_gpu_sample(unsigned char *p, const vramz_gpu_sample *x)
{
	memset(p, 0, SEG_GPU_SAMPLE_SIZE);
	for (size_t i = 0; i < gpu_sample_frame_count; i++)
		enc_member(p, &gpu_sample_frame[i], x);
	for (size_t i = 0; i < gpu_field_count; i++)
		enc_member(p, &gpu_fields[i], x);
}

void seg_dec_gpu_sample(const unsigned char *p, uint64_t size, vramz_gpu_sample *x)
{
	memset(x, 0, sizeof *x);
	for (size_t i = 0; i < gpu_sample_frame_count; i++) /* valid first: the fields clear bits */
		field_put(&gpu_sample_frame[i], x, dec_member(p, &gpu_sample_frame[i]));
	for (size_t i = 0; i < gpu_field_count; i++) {
		const struct field *f = &gpu_fields[i];
		if (record_holds(size, f))
			field_put(f, x, dec_member(p, f));
		else /* an older daemon's record: unknown */
			x->valid &= ~f->valid_bit;
	}
	x->lost = x->lost ? 1 : 0;
}

/* ---- a process on a GPU: 512 bytes; the /proc part from 40 on ---- */
#define PROC_NVML_FIELDS(U32, U64)                                                \
	U32(0, gpu_index) U32(4, pid) U32(8, valid) U32(12, type) U64(16, used_bytes) \
	U32(24, sm_pct) U32(28, mem_util_pct) U32(32, gi_id) U32(36, ci_id)
#define PROC_PROC_FIELDS(U32, U64, STR)                                            \
	U32(40, uid) U32(44, ppid) U32(48, pgid) U32(52, ns_pid)                       \
	U64(56, start_time_ticks) STR(64, 40, user) STR(104, 16, comm)                 \
	STR(120, 256, cmdline) STR(376, 72, container) STR(448, 40, pod_uid)           \
	STR(488, 24, slurm_job)

void seg_enc_proc(unsigned char *p, const vramz_proc_sample *x, int redact)
{
	memset(p, 0, SEG_PROC_SIZE);
	PROC_NVML_FIELDS(E_U32, E_U64)
	if (redact) /* what NVML says stays; what /proc said goes */
		seg_put32(p, 8, x->valid & ~(uint32_t)VRAMZ_P_VISIBLE);
	else {
		PROC_PROC_FIELDS(E_U32, E_U64, E_STR)
	}
}

void seg_dec_proc(const unsigned char *p, vramz_proc_sample *x)
{
	memset(x, 0, sizeof *x);
	PROC_NVML_FIELDS(D_U32, D_U64)
	PROC_PROC_FIELDS(D_U32, D_U64, D_STR)
}

/* ---- a MIG instance: 160 bytes ---- */
#define MIG_FIELDS(U32, U64, STR)                                                 \
	U32(0, parent_index) U32(4, mig_index) U32(8, gi_id) U32(12, ci_id)           \
	U32(16, valid) U64(24, mem_total_bytes) U64(32, mem_used_bytes)               \
	U64(40, mem_free_bytes) STR(48, 96, uuid)

void seg_enc_mig(unsigned char *p, const vramz_mig_sample *x)
{
	memset(p, 0, SEG_MIG_SIZE);
	MIG_FIELDS(E_U32, E_U64, E_STR)
}

void seg_dec_mig(const unsigned char *p, vramz_mig_sample *x)
{
	memset(x, 0, sizeof *x);
	MIG_FIELDS(D_U32, D_U64, D_STR)
}

/* ---- a finding: 512 bytes; the summary sentence at 320 ---- */
#define FINDING_FIELDS(U32, I32, U64, I64, F64)                                    \
	U64(0, id) U32(8, revision) U32(12, kind) U32(16, severity) I32(20, gpu)       \
	U32(24, pid) U32(28, ended) U64(32, start_time_ticks) U32(192, figures)        \
	U32(196, count) U32(200, ref_count) F64(208, rate_bytes_per_s)                 \
	F64(216, rate_ci_low_bytes_per_s) F64(224, rate_ci_high_bytes_per_s)           \
	F64(232, tau) F64(240, p_value) I64(248, duration_ms) F64(256, time_to_oom_s)  \
	U64(264, bytes) U64(272, ref_bytes) F64(280, share) F64(288, value)            \
	F64(296, ref_value) I64(304, first_seen_ms) I64(312, last_update_ms)
#define FINDING_WHO(STR) STR(40, 96, job) STR(136, 16, comm) STR(152, 40, user)
#define FINDING_SUMMARY 320
#define FINDING_SUMMARY_LEN 192

/* A job key read from a process's environment (torchrun, a master
 * address, MPI) tells other users what only the owner may read. */
static int job_from_environment(const char *job)
{
	return !strncmp(job, "torchrun:", 9) || !strncmp(job, "master:", 7) ||
	       !strncmp(job, "mpi:", 4);
}

void seg_enc_finding(unsigned char *p, const vramz_finding *x, int redact)
{
	memset(p, 0, SEG_FINDING_SIZE);
	FINDING_FIELDS(E_U32, E_I32, E_U64, E_I64, E_F64)
	char sum[FINDING_SUMMARY_LEN];
	if (!redact) {
		FINDING_WHO(E_STR)
		seg_putstr(p, FINDING_SUMMARY, FINDING_SUMMARY_LEN,
			   vramz_finding_summary(x, sum, sizeof sum));
		return;
	}
	/* redacted: the numbers stay, who and what /proc said go */
	vramz_finding r = *x;
	r.comm[0] = r.user[0] = 0;
	if (job_from_environment(r.job))
		r.job[0] = 0;
	seg_putstr(p, 40, 96, r.job);
	seg_putstr(p, FINDING_SUMMARY, FINDING_SUMMARY_LEN, vramz_finding_summary(&r, sum, sizeof sum));
}

void seg_dec_finding(const unsigned char *p, vramz_finding *x)
{
	memset(x, 0, sizeof *x);
	FINDING_FIELDS(D_U32, D_I32, D_U64, D_I64, D_F64)
	FINDING_WHO(D_STR)
}
