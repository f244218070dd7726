/* SPDX-License-Identifier: Apache-2.0 */
/* mhd_dl.c - loads libmicrohttpd, zlib and libcrypt at serve's start (see
 * mhd_dl.h for why).
 *
 * Each soname is the one the build was configured against
 * (VRAMZ_MHD_SONAME, e.g. libmicrohttpd.so.12; VRAMZ_Z_SONAME,
 * VRAMZ_CRYPT_SONAME, VRAMZ_YAML_SONAME): the header's ABI and the library's major version
 * agree, as they would had we linked it.  Every symbol is resolved at once
 * (RTLD_NOW), so a library missing one fails here, with its name, not at
 * the first scrape.
 */
#define VRAMZ_MHD_DL_IMPL
#include "serve/mhd_dl.h"

#include <dlfcn.h>
#include <stdio.h>

struct vramz_mhd_api vramz_mhd;

static void *open_lib(const char *soname, const char *package, char *err, size_t errlen)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		snprintf(err, errlen, "cannot load %s, which serve needs (%s); install the %s package",
			 soname, dlerror(), package);
	return h;
}

int mhd_dl_load(char *err, size_t errlen)
{
	static int loaded;
	if (loaded)
		return 0;
	void *libs[4] = {
		open_lib(VRAMZ_MHD_SONAME, "libmicrohttpd12", err, errlen),
		NULL,
		NULL,
		NULL,
	};
	if (libs[0])
		libs[1] = open_lib(VRAMZ_Z_SONAME, "zlib1g", err, errlen);
	if (libs[1])
		libs[2] = open_lib(VRAMZ_CRYPT_SONAME, "libcrypt1", err, errlen);
	if (libs[2])
		libs[3] = open_lib(VRAMZ_GNUTLS_SONAME, "libgnutls30", err, errlen);
	struct vramz_mhd_api api;
	if (!libs[3])
		goto fail;
#define VRAMZ_MHD_LOAD(f)                                                    \
	*(void **)&api.f = dlsym(h, #f);                                     \
	if (!api.f) {                                                        \
		snprintf(err, errlen, "%s lacks %s, which serve needs", so, #f); \
		goto fail;                                                   \
	}
	{
		void *h = libs[0];
		const char *so = VRAMZ_MHD_SONAME;
		VRAMZ_MHD_FUNCS(VRAMZ_MHD_LOAD)
	}
	{
		void *h = libs[1];
		const char *so = VRAMZ_Z_SONAME;
		VRAMZ_Z_FUNCS(VRAMZ_MHD_LOAD)
	}
	{
		void *h = libs[2];
		const char *so = VRAMZ_CRYPT_SONAME;
		VRAMZ_CRYPT_FUNCS(VRAMZ_MHD_LOAD)
	}
	{
		void *h = libs[3];
		const char *so = VRAMZ_GNUTLS_SONAME;
		VRAMZ_GNUTLS_FUNCS(VRAMZ_MHD_LOAD)
	}
#undef VRAMZ_MHD_LOAD
	/* libyaml's pointers are yaml_dl_load's, loaded before or after */
#define VRAMZ_MHD_KEEP(f) api.f = vramz_mhd.f;
	VRAMZ_YAML_FUNCS(VRAMZ_MHD_KEEP)
#undef VRAMZ_MHD_KEEP
	vramz_mhd = api;
	loaded = 1;
	return 0;
fail:
	for (int i = 0; i < 4; i++)
		if (libs[i])
			dlclose(libs[i]);
	return -1;
}

int yaml_dl_load(char *err, size_t errlen)
{
	static int loaded;
	if (loaded)
		return 0;
	void *h = open_lib(VRAMZ_YAML_SONAME, "libyaml-0-2", err, errlen);
	if (!h)
		return -1;
	const char *so = VRAMZ_YAML_SONAME;
#define VRAMZ_YAML_LOAD(f)                                                   \
	*(void **)&vramz_mhd.f = dlsym(h, #f);                               \
	if (!vramz_mhd.f) {                                                  \
		snprintf(err, errlen, "%s lacks %s, which serve needs", so, #f); \
		dlclose(h);                                                  \
		return -1;                                                   \
	}
	VRAMZ_YAML_FUNCS(VRAMZ_YAML_LOAD)
#undef VRAMZ_YAML_LOAD
	loaded = 1;
	return 0;
}
