/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_jsonr.c - a fuzz target for the JSON reader (src/format/jsonr.c), which
 * reads the reports `run --compare` is handed (any file a user names).
 * libFuzzer: tests/fuzz/run.sh jsonr; without it, smoke_main.c (ctest
 * fuzz.jsonr).  The input is the document; a parse either fails with
 * "offset N: reason" or yields a tree every accessor can walk.  Crashes,
 * sanitizer reports, hangs and leaks are the findings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/jsonr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const struct jr_val *v, unsigned depth)
{
	if (depth > 200)
		abort(); /* deeper than the reader's limit */
	switch (v->type) {
	case JR_NULL:
	case JR_BOOL:
		break;
	case JR_NUM:
		if (v->num != v->num)
			abort(); /* JSON has no NaN */
		break;
	case JR_STR:
		if (!v->str)
			abort();
		break;
	case JR_ARR:
	case JR_OBJ:
		if (v->n && !v->items)
			abort();
		for (size_t i = 0; i < v->n; i++) {
			if (v->type == JR_OBJ) {
				if (!v->keys || !v->keys[i])
					abort();
				if (!jr_get(v, v->keys[i]))
					abort(); /* every key is found */
				uint64_t u;
				double d;
				jr_u64(v, v->keys[i], &u);
				jr_num(v, v->keys[i], &d);
				jr_str(v, v->keys[i]);
			}
			walk(&v->items[i], depth + 1);
		}
		break;
	default:
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char err[256];
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	err[0] = 0;
	struct jr_val *v = jr_parse(text, err, sizeof err);
	if (!v) {
		if (strncmp(err, "offset ", 7))
			abort(); /* every error says where */
	} else {
		walk(v, 0);
		jr_get(v, "schema_version");
		jr_free(v);
	}
	free(text);
	return 0;
}
