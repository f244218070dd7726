/* SPDX-License-Identifier: Apache-2.0 */
/* pyfields.c - writes python/vramz/_gpufields.py from lib/fields.c's table:
 * the validity bits, each GPU field's JSON key, bit and member, every
 * member of vramz_gpu_sample with its offset in the C struct (the ctypes
 * layout of python/vramz/_clib.py) and in the daemon's segment record (the
 * offsets of python/vramz/_segment.py), and the record's sizes.
 *
 * The Python package must install and work without a C compiler or this
 * build (the wheel is pure Python), so the generated module is committed;
 * the ctest python.fields runs `vramz_pyfields --check` on it and fails
 * while it differs from the table, and the build target python_fields
 * writes it again.  A field added in lib/fields.c thus reaches Python by a
 * rebuild, never by a hand-kept copy (issue 41).
 *
 *   vramz_pyfields                 the module on stdout
 *   vramz_pyfields -o FILE         written to FILE
 *   vramz_pyfields --check FILE    exit 1 when FILE differs
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "segment.h"

static const char usage[] =
	"usage: vramz_pyfields [-o FILE | --check FILE]\n"
	"Writes python/vramz/_gpufields.py from lib/fields.c's table (stdout without -o);\n"
	"--check exits 1 when FILE differs from what it would write.\n";

static const char head[] =
	"# SPDX-License-Identifier: Apache-2.0\n"
	"# Generated from lib/fields.c's table by tools/pyfields.c: do not edit.\n"
	"# `cmake --build BUILD --target python_fields` writes it again; the\n"
	"# ctest python.fields fails while it differs from the table.\n"
	"\"\"\"The per-GPU sample fields of lib/fields.c, for the Python package:\n"
	"the validity bits (VRAMZ_F_*), each field's JSON key, bit and struct\n"
	"member in the table's order (JSON key order, CSV column order), every\n"
	"member of vramz_gpu_sample with its place in the C struct and in the\n"
	"daemon's segment record (docs/daemon.md), and the record's sizes.\"\"\"\n";

static const char *fmt_of(const struct field *f)
{
	switch (f->type) {
	case FT_U64: return "Q";
	case FT_UINT: return "I";
	case FT_INT: return "i";
	}
	return "?";
}

/* the Python name of a bit: VRAMZ_F_MEM -> F_MEM */
static const char *py_bit(const char *bit_name)
{
	return strncmp(bit_name, "VRAMZ_", 6) ? bit_name : bit_name + 6;
}

static int bit_index(uint32_t bit)
{
	int i = 0;
	while (bit > 1) {
		bit >>= 1;
		i++;
	}
	return i;
}

static void put_bits(FILE *o)
{
	fputs("\n# VRAMZ_F_*: the bits of a GPU sample's `valid`\n", o);
	for (int b = 0; b < 32; b++) {
		uint32_t bit = 1u << b;
		const struct field *rows[] = {gpu_sample_frame, gpu_fields};
		const size_t counts[] = {gpu_sample_frame_count, gpu_field_count};
		const char *name = NULL;
		for (size_t t = 0; t < 2 && !name; t++)
			for (size_t i = 0; i < counts[t] && !name; i++)
				if (rows[t][i].valid_bit == bit)
					name = rows[t][i].bit_name;
		if (name)
			fprintf(o, "%s = 1 << %d\n", py_bit(name), bit_index(bit));
	}
}

static void put_fields(FILE *o)
{
	fputs("\n# (JSON key, validity bit, struct member), in the table's order\n"
	      "GPU_FIELDS = (\n", o);
	for (size_t i = 0; i < gpu_field_count; i++) {
		const struct field *f = &gpu_fields[i];
		fprintf(o, "    (\"%s\", %s, \"%s\"),\n", f->name, py_bit(f->bit_name), f->member);
	}
	fputs(")\n", o);
}

/* every member of the struct, in its order: fields and frame rows */
static void put_members(FILE *o)
{
	fputs("\n# every member of vramz_gpu_sample in struct order: (member, struct\n"
	      "# format, offset in the C struct, offset in the segment's record)\n"
	      "GPU_SAMPLE_MEMBERS = (\n", o);
	size_t n = gpu_sample_frame_count + gpu_field_count, done = 0;
	size_t last = 0;
	while (done < n) {
		const struct field *next = NULL;
		for (size_t i = 0; i < n; i++) {
			const struct field *f = i < gpu_sample_frame_count
				? &gpu_sample_frame[i] : &gpu_fields[i - gpu_sample_frame_count];
			if ((done == 0 || f->offset > last) && (!next || f->offset < next->offset))
				next = f;
		}
		if (!next)
			break;
		fprintf(o, "    (\"%s\", \"%s\", %zu, %u),\n", next->member, fmt_of(next), next->offset,
			next->seg_off);
		last = next->offset;
		done++;
	}
	fputs(")\n", o);
	fprintf(o, "GPU_SAMPLE_SIZE = %zu  # sizeof(vramz_gpu_sample)\n", sizeof(vramz_gpu_sample));
	fprintf(o, "# the segment's GPU sample record: its size since layout 1.2, its size\n"
		"# in 1.0 and 1.1, and where 1.0's members end (a record of the older\n"
		"# size carries nothing from there on)\n"
		"SEG_GPU_SAMPLE_SIZE = %d\nSEG_GPU_SAMPLE_MIN_SIZE = %d\nSEG_GPU_SAMPLE_10_END = %d\n",
		SEG_GPU_SAMPLE_SIZE, SEG_GPU_SAMPLE_MIN_SIZE, SEG_GPU_SAMPLE_10_END);
}

static char *module(size_t *len)
{
	char *buf = NULL;
	FILE *o = open_memstream(&buf, len);
	if (!o)
		return NULL;
	fputs(head, o);
	put_bits(o);
	put_fields(o);
	put_members(o);
	if (fclose(o)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0;
	*len = 0;
	for (;;) {
		if (*len == cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 16384);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
		if (n == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return NULL;
	}
	return buf;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *check = NULL;
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "-o"))
		out = argv[2];
	else if (argc == 3 && !strcmp(argv[1], "--check"))
		check = argv[2];
	else if (argc != 1) {
		fprintf(stderr, "vramz_pyfields: unknown arguments '%s' (-h for usage)\n", argv[1]);
		return 2;
	}
	size_t len;
	char *text = module(&len);
	if (!text) {
		fputs("vramz_pyfields: out of memory\n", stderr);
		return 1;
	}
	int rc = 0;
	if (check) {
		size_t have_len;
		char *have = slurp(check, &have_len);
		if (!have) {
			fprintf(stderr, "vramz_pyfields: %s: cannot read\n", check);
			rc = 1;
		} else if (have_len != len || memcmp(have, text, len)) {
			fprintf(stderr, "vramz_pyfields: %s differs from lib/fields.c's table: "
				"run `cmake --build BUILD --target python_fields` and commit it\n", check);
			rc = 1;
		}
		free(have);
	} else {
		FILE *f = out ? fopen(out, "w") : stdout;
		if (!f || fwrite(text, 1, len, f) != len || (out && fclose(f))) {
			fprintf(stderr, "vramz_pyfields: %s: cannot write\n", out ? out : "stdout");
			rc = 1;
		}
	}
	free(text);
	return rc;
}
