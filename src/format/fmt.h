/* SPDX-License-Identifier: Apache-2.0 */
/* fmt.h - how the tool writes numbers for people: sizes, percentages,
 * times, and "-" for anything unknown (never a sentinel number). */
#ifndef VRAMZ_FMT_H
#define VRAMZ_FMT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "vramz/vramz.h"
#include <stdio.h>

#include "vramz/vramz.h"

/* snprintf for the paths `vramz top` runs every frame: the same bytes and
 * return value as snprintf for %s %c %d %i %u %% (with l, ll, z), flags
 * '-' and '0', width and precision ('*' too; a precision only for %s and
 * %f), and %f with a precision up to 9 (the exact binary value rounded
 * to nearest, ties to even, as glibc does).  Anything else - another
 * conversion or flag, an infinite or huge %f - is handed to vsnprintf
 * whole.  Why: a `top` asleep a second between frames paid glibc's
 * vfprintf cold each frame, code and locale tables, several us of a frame
 * of ~100 (docs/performance.md); this is a few hundred bytes of code. */
int fmt_snprintf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int fmt_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* v's decimal digits at p, no terminator; returns the end (at most 20
 * bytes). */
char *fmt_put_u64(char *p, uint64_t v);
/* "812 MiB", "12.3 GiB", "1.50 TiB" */
const char *fmt_bytes(char *buf, size_t len, uint64_t bytes);
/* fmt_bytes, or "-" when !valid */
const char *fmt_bytes_if(char *buf, size_t len, int valid, uint64_t bytes);
/* "%u" with a suffix, or "-" */
const char *fmt_uint_if(char *buf, size_t len, int valid, unsigned v, const char *suffix);
/* "2026-11-30T01:32:33.123Z" */
const char *fmt_iso_ms(char *buf, size_t len, int64_t unix_ms);
/* Each live backend's driver, joined by sep: "driver 580.159.04  CUDA 13.0"
 * for NVML, "amdgpu driver 6.8.0-45-generic" for amdgpu; both on a mixed
 * machine. */
const char *fmt_drivers(char *buf, size_t len, vramz_ctx *ctx, const char *sep);
/* "45s", "12m", "3h05m", "2d04h" */
const char *fmt_duration(char *buf, size_t len, int64_t ms);
/* Copies s shortened to at most width display columns, ending in "…"/"+" */
const char *fmt_trunc(char *buf, size_t len, const char *s, size_t width);

/* ANSI colour, empty strings when colour is off */
struct colors {
	const char *bold, *dim, *red, *yellow, *green, *cyan, *reset;
};
const struct colors *colors_for(FILE *f);

/* A process's job, spelled as the diagnoses' job keys: "slurm:ID",
 * "NAMESPACE/POD" (a pod the kubelet's logs name), else "pod:UID8" (the
 * pod UID's first 8), "container:ID12"; "" when none is known or the
 * process is not visible. */
const char *fmt_job(char *buf, size_t len, const vramz_proc_sample *p);
/* The same in at most width display columns (0: no limit), a named pod's
 * container added as "NAMESPACE/POD (CONTAINER)" where it fits. */
const char *fmt_job_width(char *buf, size_t len, const vramz_proc_sample *p, size_t width);

#endif
