/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_auth.c - a fuzz target for the Authorization header parser of
 * `vramz serve` (src/serve/authparse.c), which reads what any client on
 * the network sends before a password is checked.  libFuzzer:
 * tests/fuzz/run.sh auth; without it, smoke_main.c (ctest fuzz.auth).
 * The input is the header's value.  A parse either fails or yields a user
 * without a colon and a password that fit the buffer, and encoding them
 * again parses back to the same two strings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/authparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t encode64(const unsigned char *in, size_t n, char *out)
{
	static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);
		out[o++] = alpha[v >> 18 & 63];
		out[o++] = alpha[v >> 12 & 63];
		out[o++] = i + 1 < n ? alpha[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? alpha[v & 63] : '=';
	}
	out[o] = 0;
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *header = malloc(size + 1);
	if (!header)
		return 0;
	memcpy(header, data, size);
	header[size] = 0;
	char buf[SERVE_AUTH_CRED_MAX + 1];
	const char *user, *pass;
	if (serve_auth_parse(header, buf, sizeof buf, &user, &pass) == 0) {
		size_t ul = strlen(user), pl = strlen(pass);
		if (user != buf || pass != buf + ul + 1 || ul + 1 + pl > SERVE_AUTH_CRED_MAX)
			abort(); /* outside the buffer */
		if (strchr(user, ':'))
			abort(); /* the user ends at the first colon */
		/* again, from the canonical encoding */
		char cred[SERVE_AUTH_CRED_MAX + 1], again[16 + (SERVE_AUTH_CRED_MAX + 2) / 3 * 4 + 1];
		memcpy(cred, user, ul);
		cred[ul] = ':';
		memcpy(cred + ul + 1, pass, pl);
		memcpy(again, "Basic ", 6);
		encode64((const unsigned char *)cred, ul + 1 + pl, again + 6);
		char buf2[SERVE_AUTH_CRED_MAX + 1];
		const char *u2, *p2;
		if (serve_auth_parse(again, buf2, sizeof buf2, &u2, &p2) || strcmp(u2, user) ||
		    strcmp(p2, pass))
			abort();
	}
	/* a buffer too small for the credential is a refusal, never an overrun */
	char small[8];
	if (serve_auth_parse(header, small, sizeof small, &user, &pass) == 0 &&
	    strlen(user) + 1 + strlen(pass) >= sizeof small)
		abort();
	free(header);
	return 0;
}
