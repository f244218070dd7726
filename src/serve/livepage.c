/* SPDX-License-Identifier: Apache-2.0 */
/* livepage.c - GET /: the live page, one self-contained document compiled
 * into the binary (no file to install, no CDN: it works offline and on a
 * machine with no route out).
 *
 * The stylesheet and script are page.css, and page.js followed by
 * gpuview.js (the detail view of one GPU), beside this file, turned into
 * C arrays at build time (embed.cmake); this file wraps them
 * in the document and computes, once, the Content-Security-Policy that
 * lets exactly those two run: each by its SHA-256 (report/sha256.c, the
 * report page's), nothing else inline, no other origin, no handler
 * attributes, and connections only to this exporter.  The script writes
 * every string from the data with textContent, never as markup
 * (docs/exporter.md, "The live page").
 */
#include "serve/web.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "serve/page_assets.h"

static const char page_head[] =
	"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	"<meta name=\"generator\" content=\"vramz " VRAMZ_VERSION_STRING "\">\n"
	"<title>vramz</title>\n<style>";
static const char page_body[] =
	"</style>\n</head><body>\n"
	"<header><h1>vramz <span id=\"host\"></span></h1>"
	"<p id=\"state\" class=\"state wait\">connecting</p>"
	"<p class=\"last\">last sample <time id=\"last\">-</time></p>"
	"<p class=\"tools\"><button id=\"zoom\" type=\"button\" aria-pressed=\"false\" "
	"title=\"memory charts: the used range, or 0 to the total\">show total</button>"
	"<button id=\"theme\" type=\"button\" aria-pressed=\"false\">dark</button></p></header>\n"
	"<div id=\"announce\" class=\"sr-only\" role=\"status\" aria-live=\"polite\"></div>\n"
	"<main>\n<section id=\"gpus\" aria-label=\"GPUs\"></section>\n"
	"<section id=\"findings-sec\"><h2>Findings</h2><div id=\"findings\"></div></section>\n"
	"<section><h2>Processes <span id=\"nprocs\"></span></h2><div class=\"scroll\">"
	"<table id=\"procs\"><thead><tr id=\"phead\"></tr></thead><tbody id=\"pbody\"></tbody>"
	"</table></div></section>\n</main>\n"
	/* the detail view of one GPU (gpuview.js), over the page while open */
	"<section id=\"detail\" role=\"dialog\" aria-modal=\"true\" aria-labelledby=\"dtitle\" hidden>"
	"<div class=\"dhead\"><button id=\"dclose\" type=\"button\" "
	"title=\"back to all GPUs (Esc)\">&larr; all GPUs</button><h2 id=\"dtitle\"></h2>"
	"<label>range <select id=\"drange\"></select></label></div>"
	"<p class=\"dhint\">The pointer, or the arrow keys on a focused chart, shows the values "
	"at that time; Esc or Back closes.</p><div id=\"dcharts\"></div></section>\n"
	"<footer>vramz " VRAMZ_VERSION_STRING " &middot; read-only &middot; "
	"<a href=\"/api/v1/status\">/api/v1/status</a> &middot; "
	"<a href=\"/api/v1/events\">/api/v1/events</a> &middot; <a href=\"/metrics\">/metrics</a>"
	"</footer>\n<script>";
static const char page_tail[] = "</script>\n</body></html>\n";

static char *page;      /* the whole document, built once */
static size_t page_len;
static char csp[512];   /* its Content-Security-Policy */

int page_init(void)
{
	if (page)
		return 0;
	char hs[45], hj[45];
	sha256_b64(page_css, sizeof page_css - 1, hs);
	sha256_b64(page_js, sizeof page_js - 1, hj);
	snprintf(csp, sizeof csp,
		 "default-src 'none'; style-src 'sha256-%s'; script-src 'sha256-%s'; "
		 "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
		 "frame-ancestors 'none'",
		 hs, hj);
	size_t n = sizeof page_head + sizeof page_css + sizeof page_body + sizeof page_js +
		   sizeof page_tail;
	char *p = malloc(n);
	if (!p)
		return -1;
	size_t o = 0;
	const char *parts[] = {page_head, page_css, page_body, page_js, page_tail};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		size_t l = strlen(parts[i]);
		memcpy(p + o, parts[i], l);
		o += l;
	}
	page = p; /* kept for the life of the process */
	page_len = o;
	return 0;
}

enum MHD_Result page_answer(struct MHD_Connection *c)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(page_len, page, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
	MHD_add_response_header(r, "Content-Security-Policy", csp);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	serve_web_headers(r);
	serve_conf_headers(r);
	enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}
