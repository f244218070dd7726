/* SPDX-License-Identifier: Apache-2.0 */
/* errors.c - the library's error strings and version, generated from the
 * one X-macro list in vramz.h so codes and messages cannot drift apart. */
#include "vramz/vramz.h"

const char *vramz_strerror(int err)
{
	switch (err) {
#define VRAMZ_ERR_CASE(name, value, msg) \
	case value:                      \
		return msg;
		VRAMZ_ERRORS(VRAMZ_ERR_CASE)
#undef VRAMZ_ERR_CASE
	}
	return "unknown error";
}

const char *vramz_version(void)
{
	return VRAMZ_VERSION_STRING;
}
