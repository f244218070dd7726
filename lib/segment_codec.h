/* SPDX-License-Identifier: Apache-2.0 */
/* segment_codec.h - one function a record kind each way between the
 * library's structs and the segment's fixed little-endian records
 * (docs/daemon.md lists the same offsets).  Internal to lib/segment*.c. */
#ifndef VRAMZ_SEGMENT_CODEC_H
#define VRAMZ_SEGMENT_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "segment.h"

static inline void seg_put32(unsigned char *p, size_t off, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[off + (size_t)i] = (unsigned char)(v >> (8 * i));
}
static inline void seg_put64(unsigned char *p, size_t off, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[off + (size_t)i] = (unsigned char)(v >> (8 * i));
}
static inline uint32_t seg_get32(const unsigned char *p, size_t off)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[off + (size_t)i];
	return v;
}
static inline uint64_t seg_get64(const unsigned char *p, size_t off)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[off + (size_t)i];
	return v;
}
/* A NUL-padded text field of size bytes (always NUL-terminated). */
static inline void seg_putstr(unsigned char *p, size_t off, size_t size, const char *s)
{
	size_t n = strnlen(s, size - 1);
	memcpy(p + off, s, n);
	memset(p + off + n, 0, size - n);
}
/* Reads a text field into dst (dstlen), stopping at NUL or the field end. */
static inline void seg_getstr(const unsigned char *p, size_t off, size_t size, char *dst,
			      size_t dstlen)
{
	size_t n = strnlen((const char *)p + off, size);
	if (n >= dstlen)
		n = dstlen - 1;
	memcpy(dst, p + off, n);
	dst[n] = 0;
}

void seg_enc_gpu_info(unsigned char *p, const vramz_gpu_info *g, int present);
void seg_dec_gpu_info(const unsigned char *p, vramz_gpu_info *g, int *present);
void seg_enc_gpu_sample(unsigned char *p, const vramz_gpu_sample *g);
/* size: the record's, from the header (the health fields need 256) */
void seg_dec_gpu_sample(const unsigned char *p, uint64_t size, vramz_gpu_sample *g);
/* redact: clear what /proc told about the process (docs/daemon.md) */
void seg_enc_proc(unsigned char *p, const vramz_proc_sample *s, int redact);
void seg_dec_proc(const unsigned char *p, vramz_proc_sample *s);
void seg_enc_mig(unsigned char *p, const vramz_mig_sample *m);
void seg_dec_mig(const unsigned char *p, vramz_mig_sample *m);
void seg_enc_finding(unsigned char *p, const vramz_finding *f, int redact);
void seg_dec_finding(const unsigned char *p, vramz_finding *f);

#endif
