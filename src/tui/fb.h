/* SPDX-License-Identifier: Apache-2.0 */
/* fb.h - the frame buffer `vramz top` draws into: one cell (a wide
 * character and a colour role) per screen position.  render.c fills it
 * every frame; fb_flush sends only the cells that differ from the frame
 * before, so an unchanged row costs a compare, not a redraw. */
#ifndef VRAMZ_TUI_FB_H
#define VRAMZ_TUI_FB_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/* Sizes the buffer to the screen (LINES x COLS) and blanks it; after a
 * new size the next flush sends every cell not known to be shown. */
int fb_begin(void);
/* Writes s (UTF-8 or the locale's bytes) at (y, x) in at most w columns;
 * pads with blanks to w when pad.  Returns the columns written. */
int fb_put(int y, int x, int w, int role, const char *s, int pad);
/* One character of width 1 at (y, x). */
void fb_putc(int y, int x, int role, wchar_t c);
/* A column of h characters (width 1) from (y, x) down: a plot's. */
void fb_column(int y, int x, int h, int role, const wchar_t *glyphs);
/* n cells of width 1 from (y, x): character ch[i] in role role[i] (a
 * chart's row). */
void fb_cells(int y, int x, int n, const uint32_t *ch, const unsigned char *role);
/* n copies of c (width 1) from (y, x). */
void fb_fill(int y, int x, int n, int role, wchar_t c);
/* Region memos.  A region that draws row y from inputs it can sum up
 * tags the row with a hash of them after drawing it (fb_tag); the next
 * frame, fb_keep(y, tag) with the same tag says 1 when the row was drawn
 * in the frame before, holds what that tag drew (nothing drew over it
 * since) and was sent: the row counts as drawn in this frame, unchanged,
 * with nothing to compare at the flush.  0: draw it (and tag it again).
 * A row drawn on after it was tagged loses the tag. */
int fb_keep(int y, uint64_t tag);
/* fb_keep of rows y .. y + n - 1 with tags tag, tag + 1 ...: all of them
 * (1) or none (0). */
int fb_keep_rows(int y, int n, uint64_t tag);
void fb_tag(int y, uint64_t tag);
/* A tag of n bytes at p (never 0), going on from seed (0 to start). */
uint64_t fb_hash(const void *p, size_t n, uint64_t seed);
/* No row drawn so far may be kept (fb_keep says 0): when what a tag
 * promised no longer holds for every row (the screen cleared, several
 * ticks in one frame).  Between frames, or before a frame draws. */
void fb_forget(void);
/* Sends the changed cells to the terminal: itself (term_direct) or
 * through curses' screen and refresh(). */
void fb_flush(void);
/* The screen is cleared (a resize, ^L) and the next flush sends every
 * cell it does not show. */
void fb_redraw(void);
void fb_free(void);

#endif
