/* SPDX-License-Identifier: Apache-2.0 */
/* authparse.h - the Authorization header of HTTP basic authentication
 * (RFC 7617), parsed without libmicrohttpd.
 *
 * libmicrohttpd parses it itself from 0.9.76 on
 * (MHD_basic_auth_get_username_password3); Debian 12's 0.9.75 has only
 * the older call, which gives no length and so cannot tell a NUL inside
 * a name from its end.  This parser is small, takes any header a client
 * sends, and is fuzzed on its own (tests/fuzz/fuzz_auth.c).
 */
#ifndef VRAMZ_SERVE_AUTHPARSE_H
#define VRAMZ_SERVE_AUTHPARSE_H

#include <stddef.h>

/* user:password as sent, decoded; longer ones are refused unread */
#define SERVE_AUTH_CRED_MAX 512

/* "Basic dXNlcjpwYXNz" into user and password (NUL-terminated, in buf;
 * buflen at least SERVE_AUTH_CRED_MAX + 1 for every credential to fit).
 * 0, or -1 when it is not basic credentials: another scheme, bad base64,
 * no colon, a NUL byte, or more than buf holds. */
int serve_auth_parse(const char *header, char *buf, size_t buflen, const char **user,
		     const char **pass);

#endif
