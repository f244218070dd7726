/* SPDX-License-Identifier: Apache-2.0 */
/* lex.c - the value syntax of fake NVML scenario files: sizes with units,
 * growth rates, durations, error and topology names, and the tokenizer.
 *
 * Kept apart from scenario.c's grammar so each stays small, and so the
 * README's table of units has one place to check against.  Every function
 * here is pure: a string in, a value and true out, or false.
 */
#include "fake.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const fake_fn_names[FN_COUNT] = {
#define FAKE_FN_NAME(req, name, params) #name,
	NVML_FUNCS(FAKE_FN_NAME)
#undef FAKE_FN_NAME
};

enum fake_fn fake_fn_lookup(const char *name)
{
	for (unsigned i = 0; i < FN_COUNT; i++)
		if (!strcmp(fake_fn_names[i], name))
			return (enum fake_fn)i;
	return FN_COUNT;
}

static const struct {
	const char *name;
	nvmlReturn_t code;
} codes[] = {
	{"SUCCESS", NVML_SUCCESS},
	{"UNINITIALIZED", NVML_ERROR_UNINITIALIZED},
	{"INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT},
	{"NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED},
	{"NO_PERMISSION", NVML_ERROR_NO_PERMISSION},
	{"ALREADY_INITIALIZED", NVML_ERROR_ALREADY_INITIALIZED},
	{"NOT_FOUND", NVML_ERROR_NOT_FOUND},
	{"INSUFFICIENT_SIZE", NVML_ERROR_INSUFFICIENT_SIZE},
	{"INSUFFICIENT_POWER", NVML_ERROR_INSUFFICIENT_POWER},
	{"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
	{"TIMEOUT", NVML_ERROR_TIMEOUT},
	{"IRQ_ISSUE", NVML_ERROR_IRQ_ISSUE},
	{"LIBRARY_NOT_FOUND", NVML_ERROR_LIBRARY_NOT_FOUND},
	{"FUNCTION_NOT_FOUND", NVML_ERROR_FUNCTION_NOT_FOUND},
	{"CORRUPTED_INFOROM", NVML_ERROR_CORRUPTED_INFOROM},
	{"GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST},
	{"RESET_REQUIRED", NVML_ERROR_RESET_REQUIRED},
	{"OPERATING_SYSTEM", NVML_ERROR_OPERATING_SYSTEM},
	{"LIB_RM_VERSION_MISMATCH", NVML_ERROR_LIB_RM_VERSION_MISMATCH},
	{"IN_USE", NVML_ERROR_IN_USE},
	{"MEMORY", NVML_ERROR_MEMORY},
	{"NO_DATA", NVML_ERROR_NO_DATA},
	{"INSUFFICIENT_RESOURCES", NVML_ERROR_INSUFFICIENT_RESOURCES},
	{"ARGUMENT_VERSION_MISMATCH", NVML_ERROR_ARGUMENT_VERSION_MISMATCH},
	{"DEPRECATED", NVML_ERROR_DEPRECATED},
	{"NOT_READY", NVML_ERROR_NOT_READY},
	{"GPU_NOT_FOUND", NVML_ERROR_GPU_NOT_FOUND},
	{"INVALID_STATE", NVML_ERROR_INVALID_STATE},
	{"UNKNOWN", NVML_ERROR_UNKNOWN},
};

int fake_code_lookup(const char *name)
{
	char *end;
	unsigned long n;

	if (!strncmp(name, "NVML_ERROR_", 11))
		name += 11;
	else if (!strncmp(name, "NVML_", 5))
		name += 5;
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!strcmp(codes[i].name, name))
			return (int)codes[i].code;
	errno = 0;
	n = strtoul(name, &end, 10);
	if (isdigit((unsigned char)*name) && !*end && !errno && n <= 999)
		return (int)n;
	return -1;
}

/* ---- values -------------------------------------------------------------- */

bool fake_parse_uint(const char *s, unsigned long long max,
		       unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* "143771MiB", "1.5GiB", "4096" (bytes): whole bytes. */
bool fake_parse_size(const char *s, unsigned long long *out)
{
	static const struct {
		const char *unit;
		double mul;
	} units[] = {
		{"", 1}, {"B", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0},
		{"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
	};
	char *end;
	double v;

	if (!strncmp(s, "0x", 2)) /* a raw 64-bit answer, e.g. 0xFFFFFFFFFFFFFFFE */
		return fake_parse_uint(s, ~0ULL, out);
	if (!isdigit((unsigned char)*s))
		return false;
	v = strtod(s, &end);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		v *= units[i].mul;
		if (!(v < 9.2e18))
			return false;
		*out = (unsigned long long)(v + 0.5);
		return true;
	}
	return false;
}

/* "+64MiB/s", "-1GiB/min", "100MiB/h": bytes per second. */
bool fake_parse_rate(const char *s, double *out)
{
	char buf[64];
	const char *slash = strrchr(s, '/');
	double sign = 1, per;
	unsigned long long bytes;

	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	if (!slash || (size_t)(slash - s) >= sizeof(buf) || slash < s)
		return false;
	if (!strcmp(slash, "/s"))
		per = 1;
	else if (!strcmp(slash, "/min"))
		per = 60;
	else if (!strcmp(slash, "/h"))
		per = 3600;
	else
		return false;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (!fake_parse_size(buf, &bytes))
		return false;
	*out = sign * (double)bytes / per;
	return true;
}

/* "20ms", "500us", "1s": microseconds. */
bool fake_parse_duration(const char *s, unsigned *out_us)
{
	char *end;
	double v, mul;

	if (!isdigit((unsigned char)*s))
		return false;
	v = strtod(s, &end);
	if (!strcmp(end, "us"))
		mul = 1;
	else if (!strcmp(end, "ms"))
		mul = 1e3;
	else if (!strcmp(end, "s"))
		mul = 1e6;
	else
		return false;
	v *= mul;
	if (!(v < 4e9))
		return false;
	*out_us = (unsigned)v;
	return true;
}

/* ---- tokens -------------------------------------------------------------- */

/* Splits line in place into tokens; a double-quoted stretch (name="NVIDIA
 * H200") keeps its spaces and loses its quotes.  '#' outside quotes starts
 * a comment.  Returns the count, -1 on an unterminated quote. */
int fake_tokenize(char *line, char **tok, int max)
{
	int n = 0;
	char *r = line, *w;

	for (;;) {
		while (isspace((unsigned char)*r))
			r++;
		if (!*r || *r == '#')
			return n;
		if (n == max)
			return -1;
		tok[n++] = w = r;
		while (*r && !isspace((unsigned char)*r)) {
			if (*r == '"') {
				char *q = strchr(r + 1, '"');

				if (!q)
					return -1;
				memmove(w, r + 1, (size_t)(q - r - 1));
				w += q - r - 1;
				r = q + 1;
				continue;
			}
			*w++ = *r++;
		}
		if (*r)
			r++;
		*w = '\0';
	}
}

/* Splits "key=value"; false when tok has no '='. */
bool fake_split_kv(char *tok, char **key, char **val)
{
	char *eq = strchr(tok, '=');

	if (!eq)
		return false;
	*eq = '\0';
	*key = tok;
	*val = eq + 1;
	return true;
}

bool fake_parse_arch(const char *s, unsigned long long *out)
{
	static const char *const names[] = {
		"kepler", "maxwell", "pascal", "volta", "turing",
		"ampere", "ada", "hopper", "blackwell",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*out = NVML_DEVICE_ARCH_KEPLER + i;
			return true;
		}
	return fake_parse_uint(s, 0xFFFFFFFFu, out);
}

bool fake_parse_level(const char *s, nvmlGpuTopologyLevel_t *out)
{
	static const struct {
		const char *name;
		nvmlGpuTopologyLevel_t level;
	} levels[] = {
		{"INTERNAL", NVML_TOPOLOGY_INTERNAL},
		{"SINGLE", NVML_TOPOLOGY_SINGLE},
		{"MULTIPLE", NVML_TOPOLOGY_MULTIPLE},
		{"HOSTBRIDGE", NVML_TOPOLOGY_HOSTBRIDGE},
		{"NODE", NVML_TOPOLOGY_NODE},
		{"SYSTEM", NVML_TOPOLOGY_SYSTEM},
	};

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (!strcmp(s, levels[i].name)) {
			*out = levels[i].level;
			return true;
		}
	return false;
}
