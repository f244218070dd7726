/* SPDX-License-Identifier: Apache-2.0 */
/* test_segment_layout.c - the GPU sample record of the daemon's segment,
 * byte for byte as docs/daemon.md ("Records") lists it.  The offsets here
 * are written out by hand from that page, not taken from lib/fields.c's
 * table that the codec walks: a row given a wrong or moved offset breaks
 * every reader of an older vramz and every Python reader, and fails here.
 * Also: a record of layout 1.0/1.1 (192 bytes) leaves the VRAM health
 * fields unknown, every member of vramz_gpu_sample has a row (a field's
 * or the frame's), and no row's offset overlaps another or leaves the
 * record: what a field added in one row must get right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fields.h"
#include "segment.h"
#include "segment_codec.h"

/* one member of the record: offset, width, the value the sample holds */
struct at {
	unsigned off, width;
	uint64_t v;
};

/* docs/daemon.md, "GPU sample": every member with a distinct value */
static const struct at layout[] = {
	{0, 4, 3}, {4, 4, 0xFFFFDFu}, {8, 4, 0}, {12, 4, 41},
	{16, 8, 80ull << 30}, {24, 8, 616ull << 20}, {32, 8, 12ull << 30},
	{40, 8, 67ull << 30}, {48, 8, 1ull << 30}, {56, 4, 57}, {60, 4, 23},
	{64, 4, (uint32_t)-5}, {68, 4, 71}, {72, 4, 174590}, {76, 4, 700000},
	{80, 4, 1980}, {84, 4, 2619}, {88, 8, 0x104}, {96, 4, 5}, {100, 4, 16},
	{104, 8, 123456789}, {112, 8, 987654321}, {120, 8, 0x1234567890ull},
	{128, 4, 7}, {132, 4, 2},
	/* 1.2: VRAM health */
	{136, 4, 1}, {140, 4, 9}, {144, 8, 1001}, {152, 8, 1002}, {160, 8, 1003},
	{168, 8, 1004}, {176, 4, 11}, {180, 4, 1}, {184, 4, 1}, {188, 4, 13},
	{192, 4, 14}, {196, 4, 1}, {200, 4, 15}, {204, 4, 16}, {208, 4, 79},
	{216, 8, 1765000000123ull},
};

/* filled in place: the struct's padding is zeros, as the decoder's */
static void fill(vramz_gpu_sample *sp)
{
	memset(sp, 0, sizeof *sp);
	sp->index = 3;
	sp->valid = 0xFFFFDFu; /* all but VRAMZ_F_POWER_LIMIT: a clear bit travels too */
	sp->fan_pct = 41;
	sp->mem_total_bytes = 80ull << 30;
	sp->mem_reserved_bytes = 616ull << 20;
	sp->mem_used_bytes = 12ull << 30;
	sp->mem_free_bytes = 67ull << 30;
	sp->unattributed_bytes = 1ull << 30;
	sp->util_gpu_pct = 57;
	sp->util_mem_pct = 23;
	sp->temp_c = -5;
	sp->temp_mem_c = 71;
	sp->power_mw = 174590;
	sp->power_limit_mw = 700000;
	sp->clock_sm_mhz = 1980;
	sp->clock_mem_mhz = 2619;
	sp->throttle_reasons = 0x104;
	sp->pcie_gen = 5;
	sp->pcie_width = 16;
	sp->pcie_tx_bytes_per_s = 123456789;
	sp->pcie_rx_bytes_per_s = 987654321;
	sp->energy_mj = 0x1234567890ull;
	sp->proc_first = 7;
	sp->proc_count = 2;
	sp->ecc_mode = 1;
	sp->remap_correctable_rows = 9;
	sp->ecc_corrected_volatile = 1001;
	sp->ecc_uncorrected_volatile = 1002;
	sp->ecc_corrected_aggregate = 1003;
	sp->ecc_uncorrected_aggregate = 1004;
	sp->remap_uncorrectable_rows = 11;
	sp->remap_pending = 1;
	sp->remap_failure = 1;
	sp->retired_sbe_pages = 13;
	sp->retired_dbe_pages = 14;
	sp->retired_pending = 1;
	sp->pcie_replays = 15;
	sp->xid_events = 16;
	sp->xid_last = 79;
	sp->xid_time_ms = 1765000000123ull;
}

static void the_record_is_the_documented_layout(void **state)
{
	(void)state;
	unsigned char rec[SEG_GPU_SAMPLE_SIZE];
	memset(rec, 0xA5, sizeof rec);
	vramz_gpu_sample s;
	fill(&s);
	seg_enc_gpu_sample(rec, &s);
	assert_int_equal(SEG_GPU_SAMPLE_SIZE, 256);
	unsigned char used[SEG_GPU_SAMPLE_SIZE] = {0};
	for (size_t i = 0; i < sizeof layout / sizeof layout[0]; i++) {
		const struct at *a = &layout[i];
		uint64_t got = a->width == 8 ? seg_get64(rec, a->off) : seg_get32(rec, a->off);
		if (got != a->v)
			fail_msg("offset %u: %llu, the documented member holds %llu", a->off,
				 (unsigned long long)got, (unsigned long long)a->v);
		memset(used + a->off, 1, a->width);
	}
	/* the rest (padding, 212-215, the reserved 224-255) is zeros */
	for (unsigned i = 0; i < SEG_GPU_SAMPLE_SIZE; i++)
		if (!used[i] && rec[i])
			fail_msg("byte %u: 0x%02x where the layout has no member", i, rec[i]);
}

static void a_record_reads_back_whole(void **state)
{
	(void)state;
	unsigned char rec[SEG_GPU_SAMPLE_SIZE];
	vramz_gpu_sample s, back;
	fill(&s);
	seg_enc_gpu_sample(rec, &s);
	seg_dec_gpu_sample(rec, SEG_GPU_SAMPLE_SIZE, &back);
	assert_memory_equal(&s, &back, sizeof s);
	/* lost is a flag: any non-zero reads as 1 */
	seg_put32(rec, 8, 7);
	seg_dec_gpu_sample(rec, SEG_GPU_SAMPLE_SIZE, &back);
	assert_int_equal(back.lost, 1);
}

/* a 1.0/1.1 daemon's record is 192 bytes and has no VRAM health: those
 * fields are unknown (bit clear, value 0), whatever lies at 136-191 */
static void an_older_record_has_no_health(void **state)
{
	(void)state;
	unsigned char rec[SEG_GPU_SAMPLE_SIZE];
	vramz_gpu_sample s, back;
	fill(&s);
	seg_enc_gpu_sample(rec, &s);
	seg_dec_gpu_sample(rec, SEG_GPU_SAMPLE_MIN_SIZE, &back);
	assert_int_equal(back.valid, s.valid & ~0xFF0000u);
	assert_int_equal(back.ecc_mode, 0);
	assert_int_equal(back.remap_correctable_rows, 0);
	assert_int_equal(back.xid_time_ms, 0);
	/* and the 1.0 members are all there */
	vramz_gpu_sample want = s;
	memset((char *)&want + offsetof(vramz_gpu_sample, ecc_mode), 0,
	       sizeof want - offsetof(vramz_gpu_sample, ecc_mode));
	want.valid = back.valid;
	assert_memory_equal(&want, &back, sizeof want);
}

/* every row of both tables, in struct order */
static size_t all_rows(const struct field **rows, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < gpu_sample_frame_count && n < cap; i++)
		rows[n++] = &gpu_sample_frame[i];
	for (size_t i = 0; i < gpu_field_count && n < cap; i++)
		rows[n++] = &gpu_fields[i];
	for (size_t i = 1; i < n; i++) /* insertion sort by offset */
		for (size_t j = i; j > 0 && rows[j - 1]->offset > rows[j]->offset; j--) {
			const struct field *x = rows[j];
			rows[j] = rows[j - 1];
			rows[j - 1] = x;
		}
	return n;
}

/* a member added to the struct without a row (or a row naming a member
 * twice) leaves a hole or an overlap in the struct's order */
static void every_member_has_one_row(void **state)
{
	(void)state;
	const struct field *rows[128];
	size_t n = all_rows(rows, 128);
	assert_int_equal(n, gpu_sample_frame_count + gpu_field_count);
	size_t end = 0;
	for (size_t i = 0; i < n; i++) {
		size_t w = field_width(rows[i]);
		size_t want = (end + w - 1) / w * w; /* the C ABI's alignment */
		if (rows[i]->offset != want)
			fail_msg("%s at byte %zu of vramz_gpu_sample: a member between it and "
				 "the row before (byte %zu) has no row in lib/fields.c",
				 rows[i]->member, rows[i]->offset, want);
		assert_string_equal(rows[i]->name, rows[i]->member);
		end = rows[i]->offset + w;
	}
	assert_int_equal((end + 7) / 8 * 8, sizeof(vramz_gpu_sample));
}

static void the_segment_offsets_fit_the_record(void **state)
{
	(void)state;
	const struct field *rows[128];
	size_t n = all_rows(rows, 128);
	const struct field *owner[SEG_GPU_SAMPLE_SIZE] = {0};
	for (size_t i = 0; i < n; i++) {
		const struct field *f = rows[i];
		unsigned w = field_width(f);
		if (f->seg_off % w || f->seg_off + w > SEG_GPU_SAMPLE_SIZE)
			fail_msg("%s: segment offset %u is not a free, aligned %u bytes of the "
				 "%d-byte record", f->name, f->seg_off, w, SEG_GPU_SAMPLE_SIZE);
		for (unsigned b = f->seg_off; b < f->seg_off + w; b++) {
			if (owner[b])
				fail_msg("%s: segment offset %u overlaps %s", f->name, f->seg_off,
					 owner[b]->name);
			owner[b] = f;
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_record_is_the_documented_layout),
		cmocka_unit_test(a_record_reads_back_whole),
		cmocka_unit_test(an_older_record_has_no_health),
		cmocka_unit_test(every_member_has_one_row),
		cmocka_unit_test(the_segment_offsets_fit_the_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
