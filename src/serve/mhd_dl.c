/* SPDX-License-Identifier: Apache-2.0 */
/* mhd_dl.c - loads libmicrohttpd at serve's start (see mhd_dl.h for why).
 *
 * The soname is the one the build was configured against
 * (VRAMZ_MHD_SONAME, e.g. libmicrohttpd.so.12): the header's ABI and the
 * library's major version agree, as they would had we linked it.  Every
 * symbol is resolved at once (RTLD_NOW), so a library missing one fails
 * here, with its name, not at the first scrape.
 */
#define VRAMZ_MHD_DL_IMPL
#include "serve/mhd_dl.h"

#include <dlfcn.h>
#include <stdio.h>

struct vramz_mhd_api vramz_mhd;

int mhd_dl_load(char *err, size_t errlen)
{
	static void *lib;
	if (lib)
		return 0;
	void *h = dlopen(VRAMZ_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "cannot load %s, which serve needs (%s); install "
			 "the libmicrohttpd12 package", VRAMZ_MHD_SONAME, dlerror());
		return -1;
	}
	struct vramz_mhd_api api;
#define VRAMZ_MHD_LOAD(f)                                                    \
	*(void **)&api.f = dlsym(h, #f);                                     \
	if (!api.f) {                                                        \
		snprintf(err, errlen, "%s lacks %s, which serve needs",      \
			 VRAMZ_MHD_SONAME, #f);                               \
		dlclose(h);                                                  \
		return -1;                                                   \
	}
	VRAMZ_MHD_FUNCS(VRAMZ_MHD_LOAD)
#undef VRAMZ_MHD_LOAD
	vramz_mhd = api;
	lib = h;
	return 0;
}
