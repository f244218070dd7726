/* fmt.h - how the tool writes numbers for people: sizes, percentages,
 * times, and "-" for anything unknown (never a sentinel number). */
#ifndef VRAMZ_FMT_H
#define VRAMZ_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/vramz.h"
#include <stdio.h>

#include "vramz/vramz.h"

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
 * "pod:UID8" (the pod UID's first 8), "container:ID12"; "" when none is
 * known or the process is not visible. */
const char *fmt_job(char *buf, size_t len, const vramz_proc_sample *p);

#endif
