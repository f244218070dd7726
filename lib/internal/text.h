/* SPDX-License-Identifier: Apache-2.0 */
/* text.h - the one rule for text from outside that may reach a terminal.
 *
 * A GPU name from NVML or a segment, a driver version, a user or command
 * line from /proc or a log, a file name from a PyTorch agent: any of them
 * can hold bytes that drive a terminal (ESC, CSI, OSC set its title, clear
 * its screen) or Unicode controls that reorder what a person reads (bidi
 * overrides).  Every such string goes through text_sanitize() once, where
 * it enters the library (lib/ctx.c for every backend, the log reader, the
 * agent file parser, /proc), and writers that encode (JSON, HTML) ask
 * text_cp_unsafe() about each code point, so one list says what is unsafe.
 */
#ifndef VRAMZ_TEXT_H
#define VRAMZ_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Length (1-4) of the valid, shortest-form UTF-8 sequence at s, its code
 * point in *cp; 0 when s does not start one (a stray continuation byte, an
 * overlong form, a surrogate, above U+10FFFF).  s is NUL-terminated: a
 * sequence cut by the NUL is invalid. */
size_t text_utf8(const unsigned char *s, uint32_t *cp);

/* 1 for a code point that must not reach a terminal as itself: C0 controls
 * (U+0000-U+001F), DEL, the C1 controls U+0080-U+009F (U+009B is a
 * one-character CSI), and the bidi controls U+061C, U+200E, U+200F,
 * U+202A-U+202E and U+2066-U+2069. */
int text_cp_unsafe(uint32_t cp);

/* In place: each unsafe code point and each byte that does not start valid
 * UTF-8 (a raw 0x9B is CSI on an 8-bit terminal) becomes one '?'.  The text
 * can only shrink.  Returns how many were replaced. */
size_t text_sanitize(char *s);

/* s copied into buf (len bytes, at least 1), cut at a character boundary,
 * then sanitized; returns buf. */
const char *text_safe(char *buf, size_t len, const char *s);

/* The same for n bytes of s that need not end in a NUL (a record's value). */
void text_copy_n(char *dst, size_t cap, const char *s, size_t n);

#endif
