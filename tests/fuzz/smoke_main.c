/* SPDX-License-Identifier: Apache-2.0 */
/* smoke_main.c - runs a fuzz target without libFuzzer, so CI (gcc, no
 * clang) exercises every target on each build: ctest's fuzz.* tests run
 * each target over its corpus plus a fixed number of deterministic
 * mutations of every input (byte flips, format tokens, cut and repeated
 * spans, truncations).  Bounded and repeatable: the same inputs every run,
 * so a failure reproduces; finding new bugs is tests/fuzz/run.sh's job.
 *
 *   fuzz_TARGET [-m MUTATIONS] FILE|DIR...
 *
 * With one file and no -m it is also the AFL++ harness (afl-fuzz ... @@).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SMOKE_MAX_INPUT (1u << 20)

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state; /* xorshift64 */
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* bytes that steer the parsers: separators, quotes, signs, digits, NUL */
static const char tokens[] = "\n\r,\"=#{}[]:-+.0x9e \\\0\xff";

static size_t mutate(uint8_t *b, size_t n, size_t cap)
{
	unsigned ops = 1 + (unsigned)(rnd() % 4);
	for (unsigned k = 0; k < ops; k++) {
		size_t at = n ? (size_t)(rnd() % n) : 0;
		switch (rnd() % 6) {
		case 0: /* flip a bit */
			if (n)
				b[at] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		case 1: /* a token byte */
			if (n)
				b[at] = (uint8_t)tokens[rnd() % (sizeof tokens - 1)];
			break;
		case 2: { /* cut a span */
			size_t len = n - at ? 1 + (size_t)(rnd() % (n - at)) % 64 : 0;
			memmove(b + at, b + at + len, n - at - len);
			n -= len;
			break;
		}
		case 3: { /* repeat a span */
			size_t len = n - at ? 1 + (size_t)(rnd() % (n - at)) % 256 : 0;
			if (n + len <= cap) {
				memmove(b + at + len, b + at, n - at);
				n += len;
			}
			break;
		}
		case 4: /* truncate */
			n = at;
			break;
		case 5: /* a long run of one byte: lines and numbers past their bounds */
			if (n + 1100 <= cap) {
				memmove(b + at + 1100, b + at, n - at);
				memset(b + at, rnd() % 2 ? '9' : 'x', 1100);
				n += 1100;
			}
			break;
		}
	}
	return n;
}

static int run_file(const char *path, unsigned mutations, unsigned *runs)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "smoke: cannot open %s\n", path);
		return 1;
	}
	uint8_t *in = malloc(SMOKE_MAX_INPUT), *b = malloc(SMOKE_MAX_INPUT + 4096);
	if (!in || !b)
		abort();
	size_t n = fread(in, 1, SMOKE_MAX_INPUT, f);
	fclose(f);
	LLVMFuzzerTestOneInput(in, n);
	(*runs)++;
	rng_state = 0x9e3779b97f4a7c15ull ^ n;
	for (const char *p = path; *p; p++)
		rng_state = rng_state * 31 + (unsigned char)*p;
	if (!rng_state)
		rng_state = 1;
	for (unsigned i = 0; i < mutations; i++) {
		memcpy(b, in, n);
		size_t m = mutate(b, n, SMOKE_MAX_INPUT + 4096);
		LLVMFuzzerTestOneInput(b, m);
		(*runs)++;
	}
	free(in);
	free(b);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	unsigned mutations = 0, runs = 0;
	int bad = 0, i = 1;
	if (argc > 2 && !strcmp(argv[1], "-m")) {
		mutations = (unsigned)strtoul(argv[2], NULL, 10);
		i = 3;
	}
	if (i >= argc) { /* AFL++ without @@: one input on stdin */
		static uint8_t buf[SMOKE_MAX_INPUT];
		size_t n = fread(buf, 1, sizeof buf, stdin);
		return LLVMFuzzerTestOneInput(buf, n);
	}
	for (; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) || !S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i], mutations, &runs);
			continue;
		}
		DIR *d = opendir(argv[i]);
		char *names[512];
		unsigned nn = 0;
		for (struct dirent *e; d && (e = readdir(d)) && nn < 512;)
			if (e->d_name[0] != '.')
				names[nn++] = strdup(e->d_name);
		if (d)
			closedir(d);
		qsort(names, nn, sizeof names[0], cmp);
		for (unsigned k = 0; k < nn; k++) {
			char p[4096];
			snprintf(p, sizeof p, "%s/%s", argv[i], names[k]);
			bad |= run_file(p, mutations, &runs);
			free(names[k]);
		}
	}
	printf("%u runs, no crash\n", runs);
	return bad;
}
