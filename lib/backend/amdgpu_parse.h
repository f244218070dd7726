/* SPDX-License-Identifier: Apache-2.0 */
/* amdgpu_parse.h - pure parsers of the text the amdgpu driver and the DRM
 * core put in sysfs and /proc/PID/fdinfo, apart from the backend that
 * reads the files, so that tests and the fuzz target feed them any bytes.
 * Each returns 0 or -1 ("unknown"), never a made-up value.
 */
#ifndef VRAMZ_AMDGPU_PARSE_H
#define VRAMZ_AMDGPU_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* A whole-file unsigned decimal ("8573157376\n"), as sysfs writes counts. */
int amd_parse_u64(const char *text, uint64_t *out);

/* The starred level of pp_dpm_sclk / pp_dpm_mclk ("1: 1200Mhz *"), in MHz. */
int amd_parse_dpm_current(const char *text, unsigned *mhz);
/* The highest level listed, in MHz. */
int amd_parse_dpm_max(const char *text, unsigned *mhz);

/* current_link_speed / max_link_speed ("16.0 GT/s PCIe") as a PCIe
 * generation: 2.5 -> 1, 5 -> 2, 8 -> 3, 16 -> 4, 32 -> 5, 64 -> 6. */
int amd_parse_link_gen(const char *text, unsigned *gen);

/* The uevent file of a PCI device: DRIVER=, PCI_ID=VVVV:DDDD and
 * PCI_SLOT_NAME=. */
struct amd_uevent {
	char driver[32];
	unsigned vendor_id, device_id;
	char slot[32];                  /* "0000:03:00.0", lower case */
};
int amd_parse_uevent(const char *text, struct amd_uevent *out);

/* One DRM client as /proc/PID/fdinfo/FD describes it (the kernel's "DRM
 * client usage stats"): only amdgpu's are of interest. */
struct amd_fdinfo {
	int is_amdgpu;                  /* drm-driver: amdgpu */
	char pdev[32];                  /* drm-pdev, lower case */
	uint64_t client_id;             /* drm-client-id */
	int have_client_id;
	uint64_t vram_bytes;            /* drm-memory-vram, else drm-resident-vram */
	int have_vram;
	uint64_t gfx_ns, compute_ns;    /* drm-engine-gfx / -compute */
	int have_engine;
};
int amd_parse_fdinfo(const char *text, struct amd_fdinfo *out);

/* Facts amdgpu does not report, by PCI device id (docs/amd.md). */
struct amd_model {
	unsigned device_id;
	const char *name;               /* "AMD Instinct MI300X" */
	const char *arch;               /* "CDNA 3" */
	const char *mem_type;           /* "HBM3" */
	unsigned bus_width_bits;        /* per device as the driver lists it */
};
const struct amd_model *amd_model_for(unsigned device_id);

#endif
