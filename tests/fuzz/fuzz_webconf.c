/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_webconf.c - a fuzz target for `vramz serve --web-config`'s reader
 * (src/serve/webconf.c): libyaml's document walked into the server's
 * settings.  libFuzzer: tests/fuzz/run.sh webconf; without it,
 * smoke_main.c (ctest fuzz.webconf).  The input is the file; it is read
 * as if it lay in a directory that does not exist, so relative cert_file
 * and key_file names read nothing.  A parse either fails with one line
 * naming the file, or yields settings whose strings are whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/webconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct serve_webconf wc;
	char err[512];
	err[0] = 0;
	if (serve_webconf_parse(&wc, "/nonexistent-vramz-fuzz/web.yml", text, size, err,
				sizeof err) == 0) {
		for (unsigned i = 0; i < wc.nusers; i++)
			if (strlen(wc.users[i].hash) != 60 || strchr(wc.users[i].name, ':'))
				abort(); /* only bcrypt hashes, names basic auth can send */
		for (unsigned i = 0; i < wc.nheaders; i++)
			if (strpbrk(wc.headers[i].value, "\r\n"))
				abort(); /* a header that would split the response */
		if (wc.tls && (!wc.cert_pem || !wc.key_pem))
			abort();
		serve_webconf_free(&wc);
	} else if (strncmp(err, "/nonexistent-vramz-fuzz/web.yml", 31) &&
		   !strstr(err, "cannot load")) {
		abort(); /* every error names the file */
	}
	free(text);
	return 0;
}
