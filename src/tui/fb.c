/* SPDX-License-Identifier: Apache-2.0 */
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
 *
 * Where the terminal allows (term_direct: it has absolute cursor moves),
 * the changed spans skip curses altogether: each becomes a cursor move,
 * the role's attribute bytes when the role changes and the characters,
 * all of a frame in one write().  Handing them to curses cost about 28k
 * instructions a changed line, half of what a `top` reading a daemon
 * spent in all, since curses compares its own copy of the screen again
 * and works out the cheapest way to move the cursor; the buffer here has
 * already done the comparing.  curses still reads the keys, sets the
 * terminal up and clears it (fb_redraw), and never draws over a frame:
 * nothing is ever written into its stdscr.
 */
#include "tui/fb.h"

#include <curses.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text.h"
#include "tui/term.h"

/* A cell is 4 bytes: the character (a Unicode code point takes 21 bits;
 * 0: the right half of a wide character) and its role in the top byte.
 * Four, not eight: a frame blanks, fills and compares two screens of
 * cells, and a `top` reading a daemon, asleep a second between frames,
 * pays for each cache line of them cold (docs/performance.md). */
typedef uint32_t cell;
#define CELL_CH_MASK 0x00FFFFFFu
#define CELL(ch, role) (((uint32_t)(ch) & CELL_CH_MASK) | (uint32_t)(role) << 24)
#define CELL_CH(c) ((c) & CELL_CH_MASK)
#define CELL_ROLE(c) ((int)((c) >> 24))

static cell *cur, *sent; /* this frame; what curses has */
static cell *blank_row;  /* a row of blanks */
static unsigned char *row_ok;   /* sent[] of the row is what curses shows */
/* Rows are blanked when first drawn in a frame, not all at its start: a
 * row no one draws is blank, and when what was sent there is blank too
 * (sent_blank_row) it costs neither a copy nor a compare.  Most of a
 * tall terminal under a machine of few GPUs and processes is such rows. */
static unsigned *row_frame;     /* the frame that last drew the row */
static unsigned char *sent_blank_row; /* sent[] of the row is all blanks */
static unsigned char *row_kept; /* fb_keep: the frame before's, sent */
static uint64_t *row_tag;       /* fb_tag: what drew the row; 0 unknown */
static unsigned frame;
static int rows, cols;

/* direct output: the frame's bytes, and the role the terminal has now */
static char *out;
static size_t out_len, out_cap;
static int out_role = -1;
/* the screen is blank (just cleared, nothing sent since): a new buffer
 * starts from blank rows known to be shown, so the first frame after a
 * clear sends only what is not blank */
static int screen_blank = 1;

/* What the terminal shows is blank rows: sent[] says so, and row_ok says
 * whether that is known (ok) or each row must go out whole. */
static void sent_blank(unsigned char ok)
{
	for (int y = 0; y < rows; y++) {
		memcpy(sent + (size_t)y * (size_t)cols, blank_row, (size_t)cols * sizeof *sent);
		row_ok[y] = ok;
		sent_blank_row[y] = 1;
	}
}

int fb_begin(void)
{
	if (LINES != rows || COLS != cols || !cur) {
		fb_free();
		size_t nr = (size_t)(LINES > 0 ? LINES : 1), n = nr * (size_t)(COLS > 0 ? COLS : 1);
		cur = malloc(n * sizeof *cur);
		sent = malloc(n * sizeof *sent);
		row_ok = calloc(nr, 1);
		row_frame = calloc(nr, sizeof *row_frame);
		sent_blank_row = calloc(nr, 1);
		row_kept = calloc(nr, 1);
		row_tag = calloc(nr, sizeof *row_tag);
		blank_row = malloc((size_t)(COLS > 0 ? COLS : 1) * sizeof *blank_row);
		if (!cur || !sent || !row_ok || !row_frame || !sent_blank_row || !row_kept ||
		    !row_tag || !blank_row) {
			fb_free();
			return -1;
		}
		rows = LINES;
		cols = COLS;
		for (int x = 0; x < cols; x++)
			blank_row[x] = CELL(L' ', ROLE_NORMAL);
		sent_blank((unsigned char)screen_blank);
	}
	if (++frame == 0) { /* wrapped: no row may look drawn in this frame */
		memset(row_frame, 0, (size_t)rows * sizeof *row_frame);
		frame = 1;
	}
	return 0;
}

void fb_free(void)
{
	free(cur);
	free(sent);
	free(row_ok);
	free(row_frame);
	free(sent_blank_row);
	free(row_kept);
	free(row_tag);
	free(blank_row);
	free(out);
	out = NULL;
	out_len = out_cap = 0;
	cur = sent = blank_row = NULL;
	row_ok = sent_blank_row = row_kept = NULL;
	row_frame = NULL;
	row_tag = NULL;
	rows = cols = 0;
}

/* Row y of this frame, blanked when first drawn in it. */
static cell *row_of(int y)
{
	cell *row = cur + (size_t)y * (size_t)cols;
	if (row_frame[y] != frame) {
		memcpy(row, blank_row, (size_t)cols * sizeof *row);
		row_frame[y] = frame;
	}
	row_kept[y] = 0; /* drawn on: compared at the flush */
	row_tag[y] = 0;
	return row;
}

static int can_keep(int y, uint64_t tag)
{
	return cur && y >= 0 && y < rows && tag && frame >= 2 && row_frame[y] == frame - 1 &&
	       row_ok[y] && row_tag[y] == tag;
}

int fb_keep_rows(int y, int n, uint64_t tag)
{
	for (int r = 0; r < n; r++)
		if (!can_keep(y + r, tag + (uint64_t)r))
			return 0;
	for (int r = 0; r < n; r++) {
		row_frame[y + r] = frame;
		row_kept[y + r] = 1;
	}
	return 1;
}

int fb_keep(int y, uint64_t tag)
{
	return fb_keep_rows(y, 1, tag);
}

void fb_tag(int y, uint64_t tag)
{
	if (cur && y >= 0 && y < rows && row_frame[y] == frame)
		row_tag[y] = tag;
}

uint64_t fb_hash(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *b = p;
	uint64_t h = seed ^ 0x9E3779B97F4A7C15ull ^ n;
	for (; n >= 8; n -= 8, b += 8) {
		uint64_t w;
		memcpy(&w, b, 8);
		h = (h ^ w) * 0xFF51AFD7ED558CCDull;
		h ^= h >> 32;
	}
	for (; n; n--, b++)
		h = (h ^ *b) * 0x100000001B3ull;
	h ^= h >> 29;
	return h ? h : 1;
}

void fb_forget(void)
{
	if (row_frame) /* between frames, or before any row of one is drawn */
		memset(row_frame, 0, (size_t)rows * sizeof *row_frame);
}

static void fb_invalidate(void)
{
	if (row_ok)
		memset(row_ok, 0, (size_t)rows);
}

/* Sets one cell, never leaving half of a wide character behind. */
static inline void set(cell *row, int x, uint32_t ch, int role)
{
	if (ch != 0 && CELL_CH(row[x]) == 0 && x > 0)
		row[x - 1] = CELL(L' ', CELL_ROLE(row[x - 1])); /* we cover the right half of a wide one */
	row[x] = CELL(ch, role);
	if (x + 1 < cols && CELL_CH(row[x + 1]) == 0)
		row[x + 1] = CELL(L' ', CELL_ROLE(row[x + 1])); /* or its left half: drop the right one */
}

void fb_column(int y, int x, int h, int role, const wchar_t *glyphs)
{
	if (!cur || x < 0 || x >= cols)
		return;
	for (int r = y < 0 ? -y : 0; r < h && y + r < rows; r++)
		set(row_of(y + r), x, (uint32_t)glyphs[r], role);
}

void fb_putc(int y, int x, int role, wchar_t c)
{
	if (!cur || y < 0 || y >= rows || x < 0 || x >= cols)
		return;
	set(row_of(y), x, (uint32_t)c, role);
}

void fb_cells(int y, int x, int n, const uint32_t *ch, const unsigned char *role)
{
	if (!cur || y < 0 || y >= rows || x < 0 || x >= cols)
		return;
	if (n > cols - x)
		n = cols - x;
	if (n <= 0)
		return;
	cell *row = row_of(y);
	for (int i = 0; i < n; i++)
		set(row, x + i, ch[i], role[i]);
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
	if (n <= 0)
		return;
	cell *row = row_of(y);
	for (int i = 0; i < n; i++)
		set(row, x + i, (uint32_t)c, role);
}

/* The character a well-formed UTF-8 sequence at p encodes (no overlong
 * form, no surrogate, at most U+10FFFF) when the locale is UTF-8, and its
 * length; 0 otherwise (mbrtowc decides then). */
static size_t utf8_char(const unsigned char *p, wchar_t *wc)
{
	if (!term_utf8())
		return 0;
	uint32_t c;
	size_t n;
	if (p[0] >= 0xC2 && p[0] <= 0xDF) {
		c = p[0] & 0x1Fu;
		n = 2;
	} else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
		c = p[0] & 0x0Fu;
		n = 3;
	} else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
		c = p[0] & 0x07u;
		n = 4;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3Fu);
	}
	if ((n == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)))
		return 0;
	*wc = (wchar_t)c;
	return n;
}

int fb_put(int y, int x, int w, int role, const char *s, int pad)
{
	if (!cur || w <= 0 || y < 0 || y >= rows || x < 0 || x >= cols)
		return 0;
	if (x + w > cols)
		w = cols - x;
	cell *row = row_of(y);
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
		} else if ((len = utf8_char(p, &wc)) > 0 && (cw = wcwidth(wc)) > 0) {
			/* well-formed UTF-8 (the locale's, term_utf8) of a printable
			 * character: what mbrtowc would say, without its cold code */
		} else {
			cw = 1;
			len = mbrtowc(&wc, (const char *)p, MB_LEN_MAX, &st);
			if (len == (size_t)-1 || len == (size_t)-2 || len == 0) {
				/* not a character in this locale: one '?' a byte */
				memset(&st, 0, sizeof st);
				wc = L'?';
				len = 1;
			} else if ((cw = wcwidth(wc)) < 0 || text_cp_unsafe((uint32_t)wc)) {
				/* a control, or a bidi control (lib/internal/text.h) */
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

/* Room for n more bytes of direct output; 0 when memory ran out. */
static int out_room(size_t n)
{
	if (out_len + n <= out_cap)
		return 1;
	size_t cap = out_cap ? out_cap : 16384;
	while (cap < out_len + n)
		cap *= 2;
	char *p = realloc(out, cap);
	if (!p)
		return 0;
	out = p;
	out_cap = cap;
	return 1;
}

/* Cells [a, b] of row y as terminal bytes: a cursor move, then each run of
 * one role after that role's attribute bytes (when it is not the
 * terminal's already). */
static void direct_span(int y, const cell *row, int a, int b)
{
	if (y == rows - 1 && b == cols - 1)
		b--; /* never the last cell: a terminal with auto margins scrolls */
	if (a > b || !out_room(32 + (size_t)(b - a + 1) * MB_LEN_MAX))
		return;
	out_len += (size_t)term_cup(out + out_len, 32, y, a);
	mbstate_t st;
	memset(&st, 0, sizeof st);
	int utf8 = term_utf8();
	for (int i = a; i <= b; i++) {
		uint32_t ch = CELL_CH(row[i]);
		if (!ch)
			continue; /* the right half of a wide character */
		if (CELL_ROLE(row[i]) != out_role) {
			const char *seq = term_role_seq((enum role)CELL_ROLE(row[i]));
			size_t n = strlen(seq);
			if (!out_room(n + (size_t)(b - i + 1) * MB_LEN_MAX))
				return;
			memcpy(out + out_len, seq, n);
			out_len += n;
			out_role = CELL_ROLE(row[i]);
		}
		char *p = out + out_len;
		if (ch < 0x80) {
			*p = (char)ch;
			out_len++;
		} else if (utf8) {
			if (ch < 0x800) {
				p[0] = (char)(0xC0 | ch >> 6);
				p[1] = (char)(0x80 | (ch & 0x3F));
				out_len += 2;
			} else if (ch < 0x10000) {
				p[0] = (char)(0xE0 | ch >> 12);
				p[1] = (char)(0x80 | (ch >> 6 & 0x3F));
				p[2] = (char)(0x80 | (ch & 0x3F));
				out_len += 3;
			} else {
				p[0] = (char)(0xF0 | ch >> 18);
				p[1] = (char)(0x80 | (ch >> 12 & 0x3F));
				p[2] = (char)(0x80 | (ch >> 6 & 0x3F));
				p[3] = (char)(0x80 | (ch & 0x3F));
				out_len += 4;
			}
		} else {
			size_t n = wcrtomb(p, (wchar_t)ch, &st);
			if (n == (size_t)-1) {
				memset(&st, 0, sizeof st);
				*p = '?';
				n = 1;
			}
			out_len += n;
		}
	}
}

/* Writes the frame's bytes to the terminal, all of them (a slow terminal
 * may take them in parts). */
static void direct_write(void)
{
	size_t off = 0;
	while (off < out_len) {
		ssize_t n = write(STDOUT_FILENO, out + off, out_len - off);
		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else {
			break; /* the terminal is gone: the loop sees the hangup */
		}
	}
	out_len = 0;
}

/* Sends cells [a, b] of row y, in runs of one role. */
static void send_span(int y, const cell *row, int a, int b)
{
	if (term_direct()) {
		direct_span(y, row, a, b);
		return;
	}
	wchar_t buf[512];
	move(y, a);
	int i = a;
	while (i <= b) {
		int role = CELL_ROLE(row[i]);
		int n = 0;
		for (; i <= b && CELL_ROLE(row[i]) == role && n < (int)(sizeof buf / sizeof buf[0]); i++)
			if (CELL_CH(row[i]))
				buf[n++] = (wchar_t)CELL_CH(row[i]);
		attrset(term_attr((enum role)role));
		addnwstr(buf, n);
	}
}

/* Unchanged cells between two changes of a row worth a new span rather
 * than sending them again: a plot that grows by a column and its axis
 * label far to the left change two cells, not the hundred between. */
#define FB_GAP_CELLS 12

static int same_cells(const cell *c, const cell *s, int i)
{
	return c[i] == s[i];
}

/* Sends the changed cells of row c (s: what curses has) within [a, b], in
 * spans joined across gaps shorter than FB_GAP_CELLS; a span starts and
 * ends on whole wide characters. */
static void send_changes(int y, const cell *c, const cell *s, int a, int b)
{
	while (a <= b) {
		while (a <= b && same_cells(c, s, a))
			a++;
		if (a > b)
			break;
		int e = a, gap = 0;
		for (int i = a + 1; i <= b && gap < FB_GAP_CELLS; i++) {
			if (same_cells(c, s, i)) {
				gap++;
			} else {
				e = i;
				gap = 0;
			}
		}
		int from = a, to = e;
		if (from > 0 && CELL_CH(c[from]) == 0)
			from--; /* start on the whole wide character */
		if (to + 1 < cols && CELL_CH(c[to + 1]) == 0)
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
		int drawn = row_frame[y] == frame;
		if (drawn && row_kept[y] && row_ok[y])
			continue; /* kept as sent (fb_keep) */
		if (!drawn && row_ok[y] && sent_blank_row[y])
			continue; /* blank, and shown blank: nothing to look at */
		/* not drawn: blanks, to clear what was there (row_of would also
		 * drop a drawn row's tag) */
		cell *c = drawn ? cur + (size_t)y * (size_t)cols : row_of(y);
		cell *s = sent + (size_t)y * (size_t)cols;
		if (row_ok[y] && !memcmp(c, s, (size_t)cols * sizeof *c))
			continue; /* most drawn rows, most frames: one memcmp */
		if (row_ok[y]) {
			send_changes(y, c, s, 0, cols - 1);
		} else {
			send_span(y, c, 0, cols - 1);
		}
		memcpy(s, c, (size_t)cols * sizeof *c);
		row_ok[y] = 1;
		sent_blank_row[y] = !drawn;
	}
	screen_blank = 0;
	if (term_direct()) {
		direct_write();
		return;
	}
	attrset(A_NORMAL);
	refresh();
}

void fb_redraw(void)
{
	clearok(stdscr, TRUE);
	if (!term_direct()) {
		fb_invalidate(); /* curses repaints its stdscr: resend every cell */
		return;
	}
	refresh(); /* curses clears the screen now; nothing of its own to draw */
	out_role = -1;
	screen_blank = 1;
	fb_forget();
	if (cur && rows == LINES && cols == COLS)
		sent_blank(1);
}
