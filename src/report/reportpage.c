/* SPDX-License-Identifier: Apache-2.0 */
/* reportpage.c - the `vramz report` page: one self-contained HTML file that opens
 * offline, in a mail attachment, or under a strict Content-Security-Policy.
 *
 * The page carries its own policy (default-src 'none'), and its one
 * stylesheet and one small script are allowed by their SHA-256 hashes, so
 * nothing else can run or load: no network, no fonts, no images from
 * anywhere.  No element has a style attribute (which such a policy would
 * refuse); colours come from classes.  Without the script the page is
 * complete; with it a plot shows the values under the pointer, and a drag
 * zooms every plot's time axis together (double-click resets).
 *
 * Layout: a summary, then per GPU its plots (svg.c), then the findings
 * with their evidence and advice (the words analyze prints), the
 * processes (first / peak / last memory, growth, SM share, lifetime,
 * command) and the hardware.  Colours are the Okabe-Ito palette, told
 * apart under the common colour blindnesses; the dark theme follows the
 * reader's setting; printing keeps the plots.
 */
#include "report/report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt.h"
#include "vramz/diagnose.h"

static const char css[] =
	":root{--bg:#fff;--fg:#1b1b1b;--mute:#666;--grid:#d8d8d8;--panel:#f5f5f5;--gap:#bbb;color-scheme:light dark}"
	"@media (prefers-color-scheme:dark){:root{--bg:#16181c;--fg:#e6e6e6;--mute:#9a9a9a;--grid:#3a3d44;"
	"--panel:#1f2228;--gap:#555}}"
	"body{background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,sans-serif;margin:0 auto;"
	"max-width:1400px;padding:12px 20px}"
	"h1{font-size:20px;margin:4px 0}h2{font-size:16px;margin:22px 0 4px}p{margin:4px 0}"
	".mute{color:var(--mute)}"
	"svg.plot{width:100%;height:auto;display:block;background:var(--panel)}"
	"svg.plot text{fill:var(--fg);font:11px system-ui,sans-serif}"
	".lt{font-weight:600}.ls{fill:var(--mute)!important}"
	".fr{fill:none;stroke:var(--grid)}.gr{stroke:var(--grid);stroke-dasharray:2 4}.tk{stroke:var(--mute)}"
	"svg.plot path,svg.plot line{vector-effect:non-scaling-stroke;pointer-events:none}"
	".z rect,.z text{pointer-events:none}"
	".b-p0,.s-p0{fill:#0072B2}.b-p1,.s-p1{fill:#E69F00}.b-p2,.s-p2{fill:#009E73}"
	".b-p3,.s-p3{fill:#CC79A7}.b-p4,.s-p4{fill:#56B4E9}.b-p5,.s-p5{fill:#D55E00}"
	".b-oth,.s-oth{fill:#999}.b-un,.s-un{fill:#F0E442}.b-res,.s-res{fill:#555}"
	".l-tot{fill:none;stroke:var(--fg);stroke-width:1.5;stroke-dasharray:6 3}"
	".l-min{fill:none;stroke:var(--fg);stroke-width:1;stroke-dasharray:1 2;opacity:.7}"
	".a-util{fill:#56B4E9;opacity:.45}.a-umin{fill:#0072B2;opacity:.8}"
	".l-temp{fill:none;stroke:#D55E00;stroke-width:1.5}.l-tmem{fill:none;stroke:#CC79A7;stroke-width:1.5}"
	".l-pow{fill:none;stroke:#009E73;stroke-width:1.5}"
	".l-umem{fill:none;stroke:#E69F00;stroke-width:1.5}"
	".l-sm,.l-tx{fill:none;stroke:#0072B2;stroke-width:1.5}.l-mclk{fill:none;stroke:#E69F00;stroke-width:1.5}"
	".l-fan{fill:none;stroke:#009E73;stroke-width:1.5}.l-rx{fill:none;stroke:#D55E00;stroke-width:1.5}"
	".s-sm,.s-tx{fill:#0072B2}.s-mclk,.s-umem{fill:#E69F00}.s-fan{fill:#009E73}.s-rx{fill:#D55E00}"
	".l-lim{fill:none;stroke:var(--fg);stroke-width:1;stroke-dasharray:4 3}"
	".thr-t{fill:#D55E00}.thr-p{fill:#E69F00}.lost{fill:#D55E00;opacity:.3}"
	".gap rect{fill:var(--gap);opacity:.5}.gl{fill:var(--mute)!important}"
	".fm .mk{stroke-width:2}.fm .span{opacity:.14}.fm .mn{font-weight:700;fill:#fff!important}"
	".critical .mk{stroke:#D55E00}.critical .mc,.critical .span{fill:#D55E00}"
	".warning .mk{stroke:#E69F00}.warning .mc,.warning .span{fill:#E69F00}"
	".info .mk{stroke:#0072B2}.info .mc,.info .span{fill:#0072B2}"
	".fit{stroke:var(--fg);stroke-width:2.5}.proj{stroke:#D55E00;stroke-width:2;stroke-dasharray:7 4}"
	".ml{fill:#D55E00!important;font-weight:600}"
	".hov{fill:transparent;cursor:crosshair}.cur{stroke:var(--fg);opacity:.5}"
	".ro{font:12px ui-monospace,monospace;min-height:1.5em;color:var(--mute)}"
	".key{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;margin:2px 0 6px}"
	".key svg{width:12px;height:12px;vertical-align:-1px;margin-right:4px}"
	"table{border-collapse:collapse;width:100%;font-size:13px;margin:6px 0}"
	"th,td{text-align:left;padding:3px 6px;border-bottom:1px solid var(--grid);vertical-align:top}"
	"td.n,th.n{text-align:right;white-space:nowrap}td.cmd{font:12px ui-monospace,monospace;word-break:break-all}"
	".sev-critical{color:#D55E00;font-weight:700}.sev-warning{color:#B07800;font-weight:700}"
	".sev-info{color:#0072B2}"
	"@media (prefers-color-scheme:dark){.sev-warning{color:#E69F00}.sev-info{color:#56B4E9}}"
	"@media print{body{max-width:none;background:#fff;color:#000}.ro,.hint{display:none}"
	"section.gpu{break-inside:avoid}svg.plot{background:#fff}svg.plot text{fill:#000}}";

/* hover read-out and a shared zoom; the data is the JSON block */
static const char js[] =
	"(function(){'use strict';"
	"var D=JSON.parse(document.getElementById('vz-data').textContent),a=0,b=D.cols,d0=null;"
	"function iso(ms){return new Date(ms).toISOString().replace('T',' ').slice(0,19)+'Z'}"
	"function tAt(x){return D.t0+(D.t1-D.t0)*(a+x*(b-a)/D.cols)/D.cols}"
	"function cAt(x){return Math.max(0,Math.min(D.cols-1,Math.floor(a+x*(b-a)/D.cols)))}"
	"function by(v){if(v===null||v===undefined)return'-';var u=['MiB','GiB','TiB'],i=0;"
	"while(v>=1024&&i<2){v/=1024;i++}return(i?v.toFixed(1):v.toFixed(0))+' '+u[i]}"
	"function near(g,c){for(var d=0;d<D.cols;d++){if(c-d>=0&&g.any[c-d])return c-d;"
	"if(c+d<D.cols&&g.any[c+d])return c+d}return c}"
	"function un(v,s){return v===null||v===undefined?'-':v+s}"
	"function rate(v){if(v===null||v===undefined)return'-';var u=['B','KiB','MiB','GiB'],i=0;"
	"while(v>=1024&&i<3){v/=1024;i++}return(i?v.toFixed(1):v)+' '+u[i]+'/s'}"
	"function more(g,c){var s='';if(g.umem[c]!==null)s+='  mem util '+g.umem[c]+' %';"
	"if(g.sm[c]!==null||g.mclk[c]!==null)s+='  clocks '+un(g.sm[c],'')+'/'+un(g.mclk[c],' MHz');"
	"if(g.fan[c]!==null)s+='  fan '+g.fan[c]+' %';"
	"if(g.tx[c]!==null)s+='  PCIe tx '+rate(g.tx[c])+' rx '+rate(g.rx[c]);return s}"
	"function pt(s,e){var p=s.createSVGPoint();p.x=e.clientX;p.y=e.clientY;"
	"return p.matrixTransform(s.getScreenCTM().inverse())}"
	"function zoom(){var s=D.cols/(b-a),e=D.L-s*(D.L+a),full=(a===0&&b===D.cols);"
	"document.querySelectorAll('g.z').forEach(function(g){"
	"if(full)g.removeAttribute('transform');else g.setAttribute('transform','matrix('+s+' 0 0 1 '+e+' 0)')});"
	"document.querySelectorAll('text.tl').forEach(function(t){if(!t.dataset.l)t.dataset.l=t.textContent;"
	"t.textContent=full?t.dataset.l:iso(tAt(+t.getAttribute('x')-D.L)).slice(11,19)})}"
	"Object.keys(D.gpus).forEach(function(k){var g=D.gpus[k];g.any=g.mem.map(function(v,i){"
	"return v!==null||g.util[i]!==null||g.temp[i]!==null||g.pow[i]!==null})});"
	"document.querySelectorAll('svg.plot').forEach(function(s){"
	"var g=D.gpus[s.dataset.gpu],ro=document.getElementById('ro'+s.dataset.gpu),"
	"cur=s.querySelector('line.cur');"
	"s.addEventListener('mousemove',function(e){var p=pt(s,e),x=p.x-D.L;"
	"if(x<0||x>=D.cols)return;var t=tAt(x),c=near(g,cAt(x));cur.setAttribute('x1',p.x);cur.setAttribute('x2',p.x);"
	"if(D.gaps.some(function(q){return t>q[0]&&t<q[1]})){ro.textContent=iso(t)+'  no data: the log has a gap here';return}"
	"ro.textContent=iso(t)+'  memory '+by(g.mem[c])+' (min '+by(g.min[c])+')  util '+"
	"un(g.util[c],' %')+'  temp '+un(g.temp[c],' \\u00b0C')+'  mem temp '+un(g.tmem[c],' \\u00b0C')+"
	"'  power '+un(g.pow[c],' W')+more(g,c)});"
	"s.addEventListener('mousedown',function(e){d0=pt(s,e).x-D.L;e.preventDefault()});"
	"s.addEventListener('mouseup',function(e){if(d0===null)return;var x=pt(s,e).x-D.L,"
	"l=Math.min(d0,x),h=Math.max(d0,x);d0=null;if(h-l<4)return;"
	"l=Math.max(0,l);h=Math.min(D.cols,h);var na=a+l*(b-a)/D.cols,nb=a+h*(b-a)/D.cols;"
	"if(nb-na<2)return;a=na;b=nb;zoom()});"
	"s.addEventListener('dblclick',function(){a=0;b=D.cols;zoom()})})})();";

static const char *iso(char *b, size_t n, int64_t ms)
{
	return fmt_iso_ms(b, n, ms);
}

/* ---- the data block for the script ---- */

static void arr_u(FILE *o, const char *k, const struct rep_gpu *g, int which)
{
	fprintf(o, "\"%s\":[", k);
	for (unsigned c = 0; c < REP_COLS; c++) {
		const struct rep_col *x = &g->cols[c];
		if (c)
			fputc(',', o);
		int ok = x->n && !x->lost;
		switch (which) {
		case 0: ok = ok && (x->valid & VRAMZ_F_MEM); if (ok) fprintf(o, "%" PRIu64, x->mem_max >> 20); break;
		case 1: ok = ok && (x->valid & VRAMZ_F_MEM); if (ok) fprintf(o, "%" PRIu64, x->mem_min >> 20); break;
		case 2: ok = ok && (x->valid & VRAMZ_F_UTIL); if (ok) fprintf(o, "%u", x->util_max); break;
		case 3: ok = ok && (x->valid & VRAMZ_F_TEMP); if (ok) fprintf(o, "%d", x->temp_max); break;
		case 4: ok = ok && (x->valid & VRAMZ_F_TEMP_MEM); if (ok) fprintf(o, "%d", x->tmem_max); break;
		case 5: ok = ok && (x->valid & VRAMZ_F_POWER); if (ok) fprintf(o, "%u", (x->power_max_mw + 500) / 1000); break;
		case 6: ok = ok && (x->valid & VRAMZ_F_UTIL); if (ok) fprintf(o, "%u", x->umem_max); break;
		case 7: ok = ok && (x->valid & VRAMZ_F_CLK_SM); if (ok) fprintf(o, "%u", x->sm_max); break;
		case 8: ok = ok && (x->valid & VRAMZ_F_CLK_MEM); if (ok) fprintf(o, "%u", x->mclk_max); break;
		case 9: ok = ok && (x->valid & VRAMZ_F_FAN); if (ok) fprintf(o, "%u", x->fan_max); break;
		case 10: ok = ok && (x->valid & VRAMZ_F_PCIE_TPUT); if (ok) fprintf(o, "%" PRIu64, x->tx_max); break;
		default: ok = ok && (x->valid & VRAMZ_F_PCIE_TPUT); if (ok) fprintf(o, "%" PRIu64, x->rx_max); break;
		}
		if (!ok)
			fputs("null", o);
	}
	fputs("]", o);
}

static void data_block(FILE *o, const struct rep *r)
{
	fprintf(o, "<script type=\"application/json\" id=\"vz-data\">{\"t0\":%" PRId64 ",\"t1\":%" PRId64
		",\"cols\":%u,\"L\":72,\"gpus\":{", r->t0_ms, r->t1_ms, REP_COLS);
	int first = 1;
	for (unsigned i = 0; i < r->ngpus; i++) {
		const struct rep_gpu *g = r->gpus[i];
		if (!g)
			continue;
		fprintf(o, "%s\"%u\":{", first ? "" : ",", g->index);
		first = 0;
		static const char *const keys[] = {"mem", "min", "util", "temp", "tmem", "pow",
						   "umem", "sm", "mclk", "fan", "tx", "rx"};
		for (int k = 0; k < (int)(sizeof keys / sizeof keys[0]); k++) {
			if (k)
				fputc(',', o);
			arr_u(o, keys[k], g, k);
		}
		fputc('}', o);
	}
	fputs("},\"gaps\":[", o);
	for (unsigned i = 0; i < r->ngaps; i++)
		fprintf(o, "%s[%" PRId64 ",%" PRId64 "]", i ? "," : "", r->gaps[i].from_ms, r->gaps[i].to_ms);
	fputs("]}</script>\n", o);
}

/* ---- sections ---- */

static void swatch(FILE *o, const char *cls, const char *label)
{
	fprintf(o, "<span><svg viewBox=\"0 0 12 12\" aria-hidden=\"true\"><rect class=\"%s\" width=\"12\" "
		"height=\"12\"/></svg>", cls);
	html_esc(o, label);
	fputs("</span>", o);
}

static void gpu_section(FILE *o, const struct rep *r, const struct rep_gpu *g)
{
	char b[64], b2[64];
	fprintf(o, "<section class=\"gpu\" id=\"gpu%u\"><h2>GPU %u", g->index, g->index);
	if (g->have_info) {
		fputs(": ", o);
		html_esc(o, g->info.name);
		fputs(" <span class=\"mute\">", o);
		html_esc(o, g->info.uuid);
		fputs(" ", o);
		html_esc(o, g->info.pci_bus_id);
		fputs("</span>", o);
	}
	fprintf(o, "</h2><p class=\"mute\">peak %s of %s",
		fmt_bytes(b, sizeof b, g->mem_peak), fmt_bytes(b2, sizeof b2, g->total_max));
	if (g->lost)
		fputs("; <strong>the GPU was lost</strong>", o);
	fputs("</p><div class=\"key\">", o);
	for (unsigned i = 0; i < g->ntop; i++) {
		const struct rep_proc *p = &r->procs[g->top[i]];
		char cls[16], lab[96];
		snprintf(cls, sizeof cls, "s-p%u", i);
		snprintf(lab, sizeof lab, "pid %u %s (peak %s)", p->pid, p->comm[0] ? p->comm : "?",
			 fmt_bytes(b, sizeof b, p->peak_bytes));
		swatch(o, cls, lab);
	}
	swatch(o, "s-oth", "other processes");
	swatch(o, "s-un", g->any_procs ? "unattributed" : "used (no process list in the log)");
	swatch(o, "s-res", "reserved by the driver");
	/* the lanes' second lines (the first is the blue or the only one) */
	if (g->seen & VRAMZ_F_UTIL)
		swatch(o, "s-umem", "memory util");
	if (g->seen & (VRAMZ_F_CLK_SM | VRAMZ_F_CLK_MEM)) {
		swatch(o, "s-sm", "SM clock");
		swatch(o, "s-mclk", "memory clock");
	}
	if (g->seen & VRAMZ_F_FAN)
		swatch(o, "s-fan", "fan");
	if (g->seen & VRAMZ_F_PCIE_TPUT) {
		swatch(o, "s-tx", "PCIe TX");
		swatch(o, "s-rx", "PCIe RX");
	}
	fputs("<span class=\"mute\">dashed: total; dotted: lowest in each pixel</span></div>\n", o);
	svg_gpu(o, r, g);
	fprintf(o, "<p class=\"ro\" id=\"ro%u\"><span class=\"hint\">point at a plot for its values; "
		"drag to zoom, double-click to reset</span></p></section>\n", g->index);
}

static void evidence(FILE *o, const vramz_finding *f)
{
	char b[64];
	uint32_t fg = f->figures;
	const char *sep = "";
	if (fg & VRAMZ_FG_RATE) {
		fprintf(o, "rate %s/min (95 %% CI %s", fmt_bytes(b, sizeof b, (uint64_t)(f->rate_bytes_per_s * 60)),
			fmt_bytes(b, sizeof b, (uint64_t)(f->rate_ci_low_bytes_per_s * 60)));
		fprintf(o, "-%s)", fmt_bytes(b, sizeof b, (uint64_t)(f->rate_ci_high_bytes_per_s * 60)));
		sep = "; ";
	}
	if (fg & VRAMZ_FG_TREND) {
		fprintf(o, "%stau %.2f, p %.2g", sep, f->tau, f->p_value);
		sep = "; ";
	}
	if (fg & VRAMZ_FG_DURATION) {
		fprintf(o, "%sfor %s", sep, fmt_duration(b, sizeof b, f->duration_ms));
		sep = "; ";
	}
	if ((fg & VRAMZ_FG_TTO) && f->time_to_oom_s >= 0) {
		fprintf(o, "%sOOM in %s", sep, fmt_duration(b, sizeof b, (int64_t)(f->time_to_oom_s * 1000)));
		sep = "; ";
	}
	if (fg & VRAMZ_FG_BYTES) {
		fprintf(o, "%s%s", sep, fmt_bytes(b, sizeof b, f->bytes));
		sep = "; ";
	}
	if (fg & VRAMZ_FG_REF) {
		fprintf(o, "%sref %s", sep, fmt_bytes(b, sizeof b, f->ref_bytes));
		sep = "; ";
	}
	if (fg & VRAMZ_FG_SHARE) {
		fprintf(o, "%sshare %.2f", sep, f->share);
		sep = "; ";
	}
	if (fg & VRAMZ_FG_VALUE) {
		fprintf(o, "%svalue %.1f / %.1f", sep, f->value, f->ref_value);
		sep = "; ";
	}
	if (fg & VRAMZ_FG_COUNT)
		fprintf(o, "%scount %u", sep, f->count);
}

static void findings_table(FILE *o, const struct rep *r)
{
	char b[600], t[40];
	fprintf(o, "<section id=\"findings\"><h2>Findings (%u)</h2>\n", r->nfind);
	if (!r->nfind) {
		fputs("<p>no findings</p></section>\n", o);
		return;
	}
	fputs("<table><thead><tr><th>#</th><th>severity</th><th>kind</th><th>GPU</th><th>first seen</th>"
	      "<th>what was seen</th><th>evidence</th><th>advice</th></tr></thead><tbody>\n", o);
	for (unsigned i = 0; i < r->nfind; i++) {
		const vramz_finding *f = &r->findings[i];
		const char *sev = vramz_severity_str(f->severity);
		fprintf(o, "<tr class=\"finding\" data-finding=\"%u\" data-kind=\"%s\" data-gpu=\"%d\" "
			"data-t-ms=\"%" PRId64 "\"><td class=\"n\">%u</td><td class=\"sev-%s\">%s</td><td>%s</td>"
			"<td class=\"n\">", i + 1, vramz_finding_kind_str(f->kind), f->gpu, f->first_seen_ms,
			i + 1, sev, sev, vramz_finding_kind_str(f->kind));
		if (f->gpu >= 0)
			fprintf(o, "%d", f->gpu);
		else
			fputs("-", o);
		fprintf(o, "</td><td class=\"n\">%s</td><td>", iso(t, sizeof t, f->first_seen_ms));
		html_esc(o, vramz_finding_summary(f, b, sizeof b));
		fputs("</td><td>", o);
		evidence(o, f);
		fputs("</td><td>", o);
		html_esc(o, vramz_finding_advice(f, b, sizeof b));
		fputs("</td></tr>\n", o);
	}
	fputs("</tbody></table></section>\n", o);
}

#define MAX_PROC_ROWS 300u

static const struct rep *prow_rep;

static int by_gpu_peak(const void *a, const void *b)
{
	const struct rep_proc *x = &prow_rep->procs[*(const unsigned *)a];
	const struct rep_proc *y = &prow_rep->procs[*(const unsigned *)b];
	if (x->peak_bytes != y->peak_bytes)
		return x->peak_bytes > y->peak_bytes ? -1 : 1;
	return x->gpu < y->gpu ? -1 : x->gpu > y->gpu;
}

static void procs_table(FILE *o, const struct rep *r)
{
	char b1[32], b2[32], b3[32], b4[40], b5[32], t[40];
	fprintf(o, "<section id=\"processes\"><h2>Processes (%u)</h2>\n", r->nprocs);
	if (!r->nprocs) {
		fputs("<p>no process was recorded (log with --procs to see them)</p></section>\n", o);
		return;
	}
	unsigned *idx = malloc(r->nprocs * sizeof *idx);
	if (!idx)
		return;
	for (unsigned i = 0; i < r->nprocs; i++)
		idx[i] = i;
	prow_rep = r;
	qsort(idx, r->nprocs, sizeof *idx, by_gpu_peak);
	fputs("<table><thead><tr><th class=\"n\">GPU</th><th class=\"n\">pid</th><th>user</th><th>job</th>"
	      "<th class=\"n\">first</th><th class=\"n\">peak</th><th class=\"n\">last</th>"
	      "<th class=\"n\">growth</th><th class=\"n\">SM</th><th class=\"n\">seen from</th>"
	      "<th class=\"n\">for</th><th>command</th></tr></thead><tbody>\n", o);
	unsigned n = r->nprocs < MAX_PROC_ROWS ? r->nprocs : MAX_PROC_ROWS;
	for (unsigned k = 0; k < n; k++) {
		const struct rep_proc *p = &r->procs[idx[k]];
		int64_t growth = (int64_t)p->last_bytes - (int64_t)p->first_bytes;
		char sm[16];
		if (p->sm_n)
			snprintf(sm, sizeof sm, "%.0f %%", p->sm_sum / (double)p->sm_n);
		else
			snprintf(sm, sizeof sm, "-");
		fprintf(o, "<tr class=\"proc\" data-gpu=\"%u\" data-pid=\"%u\"><td class=\"n\">%u</td>"
			"<td class=\"n\">%u</td><td>", p->gpu, p->pid, p->gpu, p->pid);
		html_esc(o, p->user[0] ? p->user : "-");
		fputs("</td><td>", o);
		html_esc(o, p->job[0] ? p->job : "-");
		fprintf(o, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
			"<td class=\"n\">%s%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
			"<td class=\"n\">%s</td><td class=\"cmd\">",
			fmt_bytes_if(b1, sizeof b1, p->have_bytes, p->first_bytes),
			fmt_bytes_if(b2, sizeof b2, p->have_bytes, p->peak_bytes),
			fmt_bytes_if(b3, sizeof b3, p->have_bytes, p->last_bytes),
			!p->have_bytes ? "" : growth < 0 ? "-" : "+",
			p->have_bytes ? fmt_bytes(b4, sizeof b4, (uint64_t)(growth < 0 ? -growth : growth)) : "-",
			sm, iso(t, sizeof t, p->first_ms),
			fmt_duration(b5, sizeof b5, p->last_ms - p->first_ms));
		html_esc(o, p->cmd[0] ? p->cmd : p->comm[0] ? p->comm : "-");
		fputs("</td></tr>\n", o);
	}
	fputs("</tbody></table>", o);
	if (n < r->nprocs)
		fprintf(o, "<p class=\"mute\">%u smaller processes not listed</p>", r->nprocs - n);
	fputs("</section>\n", o);
	free(idx);
}

static void hw_table(FILE *o, const struct rep *r)
{
	char b1[32], b2[32];
	fputs("<section id=\"hardware\"><h2>Hardware</h2><table><thead><tr><th class=\"n\">GPU</th>"
	      "<th>name</th><th>UUID</th><th>PCI bus</th><th class=\"n\">memory</th>"
	      "<th class=\"n\">peak used</th><th class=\"n\">power limit</th><th class=\"n\">peak power</th>"
	      "<th class=\"n\">peak temp</th><th class=\"n\">peak mem temp</th><th class=\"n\">mean util</th>"
	      "<th class=\"n\">samples</th></tr></thead><tbody>\n", o);
	for (unsigned i = 0; i < r->ngpus; i++) {
		const struct rep_gpu *g = r->gpus[i];
		if (!g)
			continue;
		fprintf(o, "<tr><td class=\"n\">%u</td><td>", g->index);
		html_esc(o, g->have_info ? g->info.name : "-");
		fputs("</td><td>", o);
		html_esc(o, g->have_info ? g->info.uuid : "-");
		fputs("</td><td>", o);
		html_esc(o, g->have_info ? g->info.pci_bus_id : "-");
		fprintf(o, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>",
			fmt_bytes_if(b1, sizeof b1, g->total_max != 0, g->total_max),
			fmt_bytes_if(b2, sizeof b2, g->total_max != 0 || g->mem_peak, g->mem_peak));
		if (g->limit_max_mw)
			fprintf(o, "<td class=\"n\">%.0f W</td>", g->limit_max_mw / 1000.0);
		else
			fputs("<td class=\"n\">-</td>", o);
		if (g->power_peak_mw)
			fprintf(o, "<td class=\"n\">%.0f W</td>", g->power_peak_mw / 1000.0);
		else
			fputs("<td class=\"n\">-</td>", o);
		fprintf(o, "<td class=\"n\">%s</td>", fmt_uint_if(b1, sizeof b1, g->temp_peak > 0,
								 (unsigned)g->temp_peak, " °C"));
		fprintf(o, "<td class=\"n\">%s</td>", fmt_uint_if(b1, sizeof b1, g->any_temp_mem,
								 (unsigned)(g->tmem_peak > 0 ? g->tmem_peak : 0), " °C"));
		if (g->util_n)
			fprintf(o, "<td class=\"n\">%.0f %%</td>", g->util_sum / (double)g->util_n);
		else
			fputs("<td class=\"n\">-</td>", o);
		fprintf(o, "<td class=\"n\">%lu%s</td></tr>\n", g->ticks, g->lost ? " (lost)" : "");
	}
	fputs("</tbody></table></section>\n", o);
}

int page_write(FILE *o, const struct rep *r)
{
	char hs[45], hj[45], a[40], b[40], d[32];
	sha256_b64(css, sizeof css - 1, hs);
	sha256_b64(js, sizeof js - 1, hj);
	unsigned ng = 0;
	for (unsigned i = 0; i < r->ngpus; i++)
		ng += r->gpus[i] != NULL;
	fprintf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"style-src 'sha256-%s'; script-src 'sha256-%s'; base-uri 'none'; form-action 'none'\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<meta name=\"generator\" content=\"vramz %s\">\n<title>vramz report: ", hs, hj,
		VRAMZ_VERSION_STRING);
	html_esc(o, r->source);
	fprintf(o, "</title>\n<style>%s</style>\n</head><body>\n<header><h1>vramz report: ", css);
	html_esc(o, r->source);
	fprintf(o, "</h1><p>%s to %s (%s), %" PRIu32 " ticks, %u GPU%s, %u finding%s", iso(a, sizeof a, r->t0_ms),
		iso(b, sizeof b, r->t1_ms), fmt_duration(d, sizeof d, r->t1_ms - r->t0_ms), r->tick, ng,
		ng == 1 ? "" : "s", r->nfind, r->nfind == 1 ? "" : "s");
	if (r->ngaps)
		fprintf(o, ", %u gap%s in the log", r->ngaps, r->ngaps == 1 ? "" : "s");
	char note[256];
	if (*rep_span_note(r, note, sizeof note)) {
		fputs("</p><p class=\"span-note\">Note: ", o);
		html_esc(o, note);
	}
	fputs("</p><p class=\"mute\">Memory is stacked by process at each pixel's highest sample; "
	      "findings are numbered as in the table below. Times are UTC.</p></header>\n", o);
	for (unsigned i = 0; i < r->ngpus; i++)
		if (r->gpus[i])
			gpu_section(o, r, r->gpus[i]);
	findings_table(o, r);
	procs_table(o, r);
	hw_table(o, r);
	data_block(o, r);
	fprintf(o, "<script>%s</script>\n</body></html>\n", js);
	return ferror(o) ? VRAMZ_EIO : 0;
}
