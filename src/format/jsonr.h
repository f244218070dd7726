/* SPDX-License-Identifier: Apache-2.0 */
/* jsonr.h - a small JSON reader for the documents vramz itself writes
 * (`run --compare` reads two `run --json` reports back).  Parses a whole
 * text into a tree of values; integers up to 2^64 stay exact. */
#ifndef VRAMZ_JSONR_H
#define VRAMZ_JSONR_H

#include <stddef.h>
#include <stdint.h>

enum jr_type { JR_NULL, JR_BOOL, JR_NUM, JR_STR, JR_ARR, JR_OBJ };

struct jr_val {
	enum jr_type type;
	int boolean;
	double num;
	uint64_t u64;          /* exact when is_uint */
	int is_uint;
	char *str;             /* JR_STR */
	size_t n;              /* JR_ARR / JR_OBJ members */
	struct jr_val *items;
	char **keys;           /* JR_OBJ */
};

/* NULL on a syntax error, with "offset N: reason" in err. */
struct jr_val *jr_parse(const char *text, char *err, size_t errlen);
void jr_free(struct jr_val *v);

/* Member of an object, or NULL. */
const struct jr_val *jr_get(const struct jr_val *obj, const char *key);
/* Convenience: number member or NAN-free default. */
int jr_u64(const struct jr_val *obj, const char *key, uint64_t *out);
int jr_num(const struct jr_val *obj, const char *key, double *out);
const char *jr_str(const struct jr_val *obj, const char *key);

#endif
