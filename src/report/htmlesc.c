/* SPDX-License-Identifier: Apache-2.0 */
/* htmlesc.c - text from a log made safe inside the report's HTML: user
 * names, commands, GPU names and the findings' words are data, and come
 * from processes anyone on the machine may have started.
 *
 * Its own file, below the page (reportpage.c) and the plots (svg.c), which
 * both call down into it: neither calls into the other for it.
 */
#include "report/report.h"

#include <stdint.h>

#include "text.h"

/* Markup escaped; what lib/internal/text.h calls unsafe (controls, bidi controls:
 * a character reference would be one all the same) and bytes that are not
 * UTF-8 shown as '?'. */
void html_esc(FILE *o, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		uint32_t cp;
		size_t n = text_utf8(s, &cp);
		switch (n == 1 ? *s : 0) {
		case '<': fputs("&lt;", o); break;
		case '>': fputs("&gt;", o); break;
		case '&': fputs("&amp;", o); break;
		case '"': fputs("&quot;", o); break;
		case '\'': fputs("&#39;", o); break;
		default:
			if (n && !text_cp_unsafe(cp))
				fwrite(s, 1, n, o);
			else
				fputc('?', o);
		}
		s += n ? n : 1;
	}
}
