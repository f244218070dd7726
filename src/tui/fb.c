/* fb.c - the frame buffer under `vramz top`'s renderer.
 *
 * Drawing straight into curses cost most of a tick: every cell of the
 * screen was erased and written again each frame, each string converted
 * to wide characters by mbsrtowcs and measured by wcwidth, each plot cell
 * its own curses call.  Yet from one second to the next most of the
 * screen does not change.  So render.c draws into this plain array of
 * cells - ASCII, nearly all of the text, is copied byte by byte and only
 * the other characters are decoded - and fb_flush compares each row with
 * what the frame before sent: an equal row costs one memcmp, and a changed
 * one only its changed cells (spans joined across short unchanged gaps), in
 * runs of one colour role each.  curses then works out the terminal output for
 * those cells alone, since nothing else was touched.
 *
 * A wide character (a CJK command line) takes two cells: the character,
 * then a continuation cell (ch 0) that is never sent itself.
 */
#include "tui/fb.h"

#include <curses.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tui/term.h"

struct cell {
	uint32_t ch;   /* a wchar_t; 0: the right half of a wide character */
	uint32_t role; /* enum role */
};

static struct cell *cur, *sent; /* this frame; what curses has */
static struct cell *blank_row;  /* a row of blanks, copied to start a frame */
static unsigned char *row_ok;   /* sent[] of the row is what curses shows */
static int rows, cols;

int fb_begin(void)
{
	if (LINES != rows || COLS != cols || !cur) {
		fb_free();
		size_t n = (size_t)(LINES > 0 ? LINES : 1) * (size_t)(COLS > 0 ? COLS : 1);
		cur = malloc(n * sizeof *cur);
		sent = malloc(n * sizeof *sent);
		row_ok = calloc((size_t)(LINES > 0 ? LINES : 1), 1);
		blank_row = malloc((size_t)(COLS > 0 ? COLS : 1) * sizeof *blank_row);
		if (!cur || !sent || !row_ok || !blank_row) {
			fb_free();
			return -1;
		}
		rows = LINES;
		cols = COLS;
		for (int x = 0; x < cols; x++)
			blank_row[x] = (struct cell){L' ', ROLE_NORMAL};
	}
	for (int y = 0; y < rows; y++)
		memcpy(cur + (size_t)y * (size_t)cols, blank_row, (size_t)cols * sizeof *cur);
	return 0;
}

void fb_free(void)
{
	free(cur);
	free(sent);
	free(row_ok);
	free(blank_row);
	cur = sent = blank_row = NULL;
	row_ok = NULL;
	rows = cols = 0;
}

void fb_invalidate(void)
{
	if (row_ok)
		memset(row_ok, 0, (size_t)rows);
}

void fb_dirty_rows(int y, int h)
{
	for (int r = y < 0 ? 0 : y; r < y + h && r < rows; r++)
		row_ok[r] = 0;
}

/* Sets one cell, never leaving half of a wide character behind. */
static inline void set(struct cell *row, int x, uint32_t ch, int role)
{
	if (ch != 0 && row[x].ch == 0 && x > 0)
		row[x - 1].ch = L' '; /* we cover the right half of a wide one */
	row[x].ch = ch;
	row[x].role = (uint32_t)role;
	if (x + 1 < cols && row[x + 1].ch == 0)
		row[x + 1].ch = L' '; /* or its left half: drop the right one */
}

void fb_column(int y, int x, int h, int role, const wchar_t *glyphs)
{
	if (!cur || x < 0 || x >= cols)
		return;
	for (int r = y < 0 ? -y : 0; r < h && y + r < rows; r++)
		set(cur + (size_t)(y + r) * (size_t)cols, x, (uint32_t)glyphs[r], role);
}

void fb_putc(int y, int x, int role, wchar_t c)
{
	if (!cur || y < 0 || y >= rows || x < 0 || x >= cols)
		return;
	set(cur + (size_t)y * (size_t)cols, x, (uint32_t)c, role);
}

void fb_fill(int y, int x, int n, int role, wchar_t c)
{
	if (!cur || y < 0 || y >= rows)
		return;
	if (x < 0) {
		n += x;
		x = 0;
	}
	if (n > cols - x)
		n = cols - x;
	struct cell *row = cur + (size_t)y * (size_t)cols;
	for (int i = 0; i < n; i++)
		set(row, x + i, (uint32_t)c, role);
}

int fb_put(int y, int x, int w, int role, const char *s, int pad)
{
	if (!cur || w <= 0 || y < 0 || y >= rows || x < 0 || x >= cols)
		return 0;
	if (x + w > cols)
		w = cols - x;
	struct cell *row = cur + (size_t)y * (size_t)cols;
	const unsigned char *p = (const unsigned char *)s;
	mbstate_t st;
	memset(&st, 0, sizeof st);
	int col = 0;
	while (*p) {
		wchar_t wc;
		size_t len = 1;
		int cw = 1;
		if (*p < 0x80) {
			wc = *p < 0x20 || *p == 0x7f ? L'?' : (wchar_t)*p;
		} else {
			len = mbrtowc(&wc, (const char *)p, MB_LEN_MAX, &st);
			if (len == (size_t)-1 || len == (size_t)-2 || len == 0) {
				/* not a character in this locale: one '?' a byte */
				memset(&st, 0, sizeof st);
				wc = L'?';
				len = 1;
			} else if ((cw = wcwidth(wc)) < 0) {
				wc = L'?';
				cw = 1;
			} else if (cw == 0) {
				p += len; /* combining marks: the base character stands */
				continue;
			}
		}
		if (col + cw > w)
			break;
		set(row, x + col, (uint32_t)wc, role);
		if (cw == 2)
			set(row, x + col + 1, 0, role);
		col += cw;
		p += len;
	}
	for (; pad && col < w; col++)
		set(row, x + col, L' ', role);
	return col;
}

/* Sends cells [a, b] of row y, in runs of one role. */
static void send_span(int y, const struct cell *row, int a, int b)
{
	wchar_t buf[512];
	move(y, a);
	int i = a;
	while (i <= b) {
		uint32_t role = row[i].role;
		int n = 0;
		for (; i <= b && row[i].role == role && n < (int)(sizeof buf / sizeof buf[0]); i++)
			if (row[i].ch)
				buf[n++] = (wchar_t)row[i].ch;
		attrset(term_attr((enum role)role));
		addnwstr(buf, n);
	}
}

/* Unchanged cells between two changes of a row worth a new span rather
 * than sending them again: a plot that grows by a column and its axis
 * label far to the left change two cells, not the hundred between. */
#define FB_GAP_CELLS 12

static int same(const struct cell *c, const struct cell *s, int i)
{
	return c[i].ch == s[i].ch && c[i].role == s[i].role;
}

/* Sends the changed cells of row c (s: what curses has) within [a, b], in
 * spans joined across gaps shorter than FB_GAP_CELLS; a span starts and
 * ends on whole wide characters. */
static void send_changes(int y, const struct cell *c, const struct cell *s, int a, int b)
{
	while (a <= b) {
		while (a <= b && same(c, s, a))
			a++;
		if (a > b)
			break;
		int e = a, gap = 0;
		for (int i = a + 1; i <= b && gap < FB_GAP_CELLS; i++) {
			if (same(c, s, i)) {
				gap++;
			} else {
				e = i;
				gap = 0;
			}
		}
		int from = a, to = e;
		if (from > 0 && c[from].ch == 0)
			from--; /* start on the whole wide character */
		if (to + 1 < cols && c[to + 1].ch == 0)
			to++;
		send_span(y, c, from, to);
		a = e + 1;
	}
}

void fb_flush(void)
{
	if (!cur)
		return;
	for (int y = 0; y < rows; y++) {
		struct cell *c = cur + (size_t)y * (size_t)cols;
		struct cell *s = sent + (size_t)y * (size_t)cols;
		if (row_ok[y] && !memcmp(c, s, (size_t)cols * sizeof *c))
			continue; /* most rows, most frames: one memcmp */
		if (row_ok[y]) {
			send_changes(y, c, s, 0, cols - 1);
		} else {
			send_span(y, c, 0, cols - 1);
		}
		memcpy(s, c, (size_t)cols * sizeof *c);
		row_ok[y] = 1;
	}
	attrset(A_NORMAL);
}
