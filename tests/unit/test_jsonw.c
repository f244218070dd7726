/* SPDX-License-Identifier: Apache-2.0 */
/* test_jsonw.c - the JSON writer (src/format/jsonw.c), the output side of
 * every --json: a command line full of odd bytes (control characters,
 * invalid UTF-8) still yields JSON a strict parser accepts, and nesting,
 * numbers, nulls for unknown values and pretty printing come out as
 * written here.  Split from the tests of the tool's input side
 * (test_cli_*.c), which it shared a file with.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/jsonw.h"

static char *escaped(const char *in)
{
	static char buf[1024];
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	assert_non_null(f);
	jw_escape(f, in);
	fclose(f);
	snprintf(buf, sizeof buf, "%s", mem);
	free(mem);
	return buf;
}

#define FFFD "\xef\xbf\xbd"

static void test_jsonw_escaping(void **state)
{
	(void)state;
	assert_string_equal(escaped(""), "\"\"");
	assert_string_equal(escaped("python train.py"), "\"python train.py\"");
	assert_string_equal(escaped("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
	assert_string_equal(escaped("l1\nl2\tx\r"), "\"l1\\nl2\\tx\\r\"");
	assert_string_equal(escaped("\x01\x08\x0c\x1f\x7f"),
			    "\"\\u0001\\u0008\\u000c\\u001f\\u007f\"");
	/* valid UTF-8 passes through unchanged */
	assert_string_equal(escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"),
			    "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\"");
	assert_string_equal(escaped("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF */
	/* invalid UTF-8: one U+FFFD per bad byte, the rest kept */
	assert_string_equal(escaped("a\xff" "b"), "\"a" FFFD "b\"");
	assert_string_equal(escaped("\xc3"), "\"" FFFD "\"");            /* cut short */
	assert_string_equal(escaped("\xc3x"), "\"" FFFD "x\"");
	assert_string_equal(escaped("\x80"), "\"" FFFD "\"");            /* lone continuation */
	assert_string_equal(escaped("\xc0\xaf"), "\"" FFFD FFFD "\"");   /* overlong '/' */
	assert_string_equal(escaped("\xe0\x80\xaf"), "\"" FFFD FFFD FFFD "\"");
	assert_string_equal(escaped("\xf0\x80\x80\xaf"), "\"" FFFD FFFD FFFD FFFD "\"");
	assert_string_equal(escaped("\xed\xa0\x80"), "\"" FFFD FFFD FFFD "\""); /* surrogate */
	assert_string_equal(escaped("\xf4\x90\x80\x80"), "\"" FFFD FFFD FFFD FFFD "\"");
	assert_string_equal(escaped("\xf5\x80\x80"), "\"" FFFD FFFD FFFD "\"");
	assert_string_equal(escaped("\xfe\xff"), "\"" FFFD FFFD "\"");
	assert_string_equal(escaped("\xe2\x82"), "\"" FFFD FFFD "\"");
}

static char *doc(void (*body)(struct jsonw *), int pretty)
{
	static char buf[2048];
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	struct jsonw w;
	jw_init(&w, f, pretty);
	body(&w);
	fclose(f);
	snprintf(buf, sizeof buf, "%s", mem);
	free(mem);
	return buf;
}

static void body_nested(struct jsonw *w)
{
	jw_obj(w, NULL);
	jw_u64(w, "u", UINT64_MAX);
	jw_i64(w, "i", INT64_MIN);
	jw_str(w, "s", "x\"y");
	jw_str(w, "nil", NULL);
	jw_bool(w, "t", 1);
	jw_bool(w, "f", 0);
	jw_dbl(w, "d", 12.345, 1);
	jw_dbl(w, "nan", 0.0 / 0.0, 1);
	jw_u64_if(w, "known", 1, 5);
	jw_u64_if(w, "unknown", 0, 5);
	jw_i64_if(w, "neg", 1, -3);
	jw_dbl_if(w, "dn", 0, 1.0, 2);
	jw_arr(w, "empty");
	jw_end_arr(w);
	jw_obj(w, "eo");
	jw_end_obj(w);
	jw_arr(w, "a");
	jw_u64(w, NULL, 1);
	jw_obj(w, NULL);
	jw_arr(w, "in");
	jw_str(w, NULL, "p");
	jw_null(w, NULL);
	jw_end_arr(w);
	jw_end_obj(w);
	jw_u64(w, NULL, 2);
	jw_end_arr(w);
	jw_str(w, "k\ney", "v");
	jw_end_obj(w);
	jw_finish(w);
}

static void body_top_array(struct jsonw *w)
{
	jw_arr(w, NULL);
	jw_obj(w, NULL);
	jw_end_obj(w);
	jw_obj(w, NULL);
	jw_u64(w, "x", 0);
	jw_end_obj(w);
	jw_end_arr(w);
	jw_finish(w);
}

static void test_jsonw_structure(void **state)
{
	(void)state;
	assert_string_equal(doc(body_nested, 0),
			    "{\"u\":18446744073709551615,\"i\":-9223372036854775808,"
			    "\"s\":\"x\\\"y\",\"nil\":null,\"t\":true,\"f\":false,\"d\":12.3,"
			    "\"nan\":null,\"known\":5,\"unknown\":null,\"neg\":-3,\"dn\":null,"
			    "\"empty\":[],\"eo\":{},\"a\":[1,{\"in\":[\"p\",null]},2],"
			    "\"k\\ney\":\"v\"}\n");
	assert_string_equal(doc(body_top_array, 0), "[{},{\"x\":0}]\n");
	assert_string_equal(doc(body_top_array, 1),
			    "[\n  {},\n  {\n    \"x\": 0\n  }\n]\n");
	/* pretty output is the same document, spaced */
	char compact[2048];
	snprintf(compact, sizeof compact, "%s", doc(body_nested, 0));
	const char *pretty = doc(body_nested, 1);
	char squeezed[2048];
	size_t n = 0;
	int in_str = 0;
	for (const char *p = pretty; *p && n + 1 < sizeof squeezed; p++) {
		if (*p == '"' && (p == pretty || p[-1] != '\\'))
			in_str = !in_str;
		if (!in_str && (*p == ' ' || (*p == '\n' && p[1])))
			continue;
		squeezed[n++] = *p;
	}
	squeezed[n] = 0;
	assert_string_equal(squeezed, compact);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonw_escaping),
		cmocka_unit_test(test_jsonw_structure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
