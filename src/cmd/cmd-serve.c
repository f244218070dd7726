/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-serve.c - `vramz serve`: a Prometheus exporter for each GPU node.
 *
 * One background thread samples every --interval, renders the complete
 * /metrics body once (src/format/prom.c) and publishes it to the HTTP
 * side (serve/http.c); scrapes only ever hand out the latest body, so any
 * number of scrapers cost no NVML calls and a slow client cannot delay a
 * sample.  The loop, the slow readings (PCIe throughput samples for 20 ms
 * per GPU, the energy counter takes milliseconds: read every
 * --slow-interval off the tick's path, their last values carried into the
 * ticks between so their series do not flicker) and the choice between a
 * live `vramz daemon` and sampling NVML here are src/ticker.c's.
 *
 * With the live page on (the default; --no-web turns it off) each tick
 * also goes to serve/web.h: the `status --json` document, the findings
 * and the ring of recent ticks behind GET /, /api/v1/status and the
 * event stream /api/v1/events.
 *
 * The main thread waits for SIGINT/SIGTERM, looking at the --web-config
 * files once a second meanwhile (a changed one is read again and put in
 * force: webwatch_poll), and then shuts down in order: the sampler first
 * (it publishes into the HTTP side), then HTTP, which keeps serving the
 * last body until it stops.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "commands.h"
#include "analyze/diagconf.h"
#include "format/prom.h"
#include "proc.h"
#include "vramz/diagnose.h"
#include "serve/http.h"
#include "serve/procself.h"
#include "serve/tlsconf.h"
#include "serve/web.h"
#include "serve/webconf.h"
#include "ticker.h"

/* Not claimed in Prometheus's default port allocations as far as we could
 * check (9400 is dcgm-exporter, 9835 nvidia_gpu_exporter); docs/exporter.md. */
#define SERVE_DEFAULT_LISTEN "127.0.0.1:9963"

struct sampler {
	vramz_ctx *ctx;          /* static facts (ticker_ctx) */
	struct ticker *tk;
	unsigned prom_flags;     /* PROM_* */
	struct serve_http *http;
	struct serve_web *web;   /* the live page; NULL with --no-web */
	vramz_gpu_info *info;    /* static facts, by backend index */
	unsigned ngpus;
	vramz_backend_info *bk;  /* the backends, for each GPU's driver label */
	unsigned nbk;
	unsigned *sel;           /* the selection, for a body without a sample */
	unsigned nsel;
	struct prom_buf body;
	struct prom_exporter st;
	vramz_diag *diag;        /* findings as series; NULL with --no-diagnose */
	/* --dcgm-names: dcgm-exporter's Hostname and device labels */
	char hostname[256];
	const char *hostname_label; /* --dcgm-hostname-label; NULL: Hostname */
	char (*device)[PROM_DEVICE_LEN]; /* by backend index; NULL without */
	int was_up;
	/* stop request from the main thread */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
};

/* Feeds the diagnosis engine and renders its current findings' figures as
 * series (each kind's, from the kinds table: leak rate, time to OOM, idle
 * holder and orphaned bytes, ...), so alert rules act on the same
 * diagnosis `vramz watch` prints. */
static int findings_render(struct sampler *s, const struct prom_input *in,
			   const vramz_snapshot *snap)
{
	const vramz_finding *f;
	/* a clock step is no error (the engine keeps its own time: docs/
	 * diagnoses.md, "Time"); out of memory keeps the last findings */
	if (vramz_diag_feed(s->diag, snap) < 0)
		return 0;
	unsigned n = vramz_diag_findings(s->diag, &f);
	return prom_render_findings(&s->body, in, f, n);
}

/* One tick: sample, render, publish.  Returns 0, or -1 when out of memory. */
static int serve_tick(struct sampler *s)
{
	int64_t t0 = clock_mono_ns();
	const vramz_snapshot *snap = NULL;
	vramz_ctx *src = s->ctx;
	int rc = ticker_sample(s->tk, &snap, &src);
	if (rc == VRAMZ_ENOMEM)
		return -1;
	s->st.samples_total++;
	s->st.up = rc == 0;
	if (rc < 0)
		s->st.sample_errors_total++;
	/* every GPU lost still has a body that says so */
	if (rc != 0 && rc != VRAMZ_ELOST)
		snap = NULL;
	s->st.last_sample_unix_s = snap ? (double)snap->time_ms / 1000 : s->st.last_sample_unix_s;
	if (s->was_up != s->st.up) {
		if (!s->st.up)
			cli_err("serve: sampling failed: %s%s%s", vramz_strerror(rc),
				*vramz_last_error(src) ? ": " : "", vramz_last_error(src));
		else if (s->st.samples_total > 1)
			cli_err("serve: sampling works again");
		s->was_up = s->st.up;
	}

	struct prom_input in = {
		.sys = vramz_system(s->ctx),
		.backends = s->bk,
		.backend_count = s->nbk,
		.info = s->info,
		.info_count = s->ngpus,
		.sel = s->sel,
		.sel_count = s->nsel,
		.snap = snap,
		.flags = s->prom_flags,
		.exporter = s->st,
		.hostname = s->hostname[0] ? s->hostname : NULL,
		.hostname_label = s->hostname_label,
		.device = (const char(*)[PROM_DEVICE_LEN])s->device,
	};
	/* the duration shown is the previous tick's whole cost; this one's is
	 * not known until its body is rendered */
	prom_buf_reset(&s->body);
	if (prom_render(&s->body, &in) < 0)
		return -1;
	if (s->diag && snap && findings_render(s, &in, snap) < 0)
		return -1;
	/* the exporter's own process, as client_golang's exporters have it */
	serve_procself_render(&s->body, "/proc");
	if (s->body.oom)
		return -1;
	if (s->http &&
	    serve_http_publish(s->http, s->body.p, s->body.len, s->st.up,
			       rc < 0 ? vramz_last_error(src) : NULL) < 0)
		return -1;
	/* the page after the metrics; out of memory there keeps the page's
	 * last documents and costs the metrics nothing */
	if (s->web) {
		const vramz_finding *f = NULL;
		unsigned nf = s->diag ? vramz_diag_findings(s->diag, &f) : 0;
		(void)serve_web_tick(s->web, src, snap, f, nf);
	}
	s->st.sample_duration_s = (double)(clock_mono_ns() - t0) / 1e9;
	return 0;
}

/* The static facts that are slow to read (NVLink and PCIe maxima: a
 * driver can take seconds), once, on the sampler's thread: the port is
 * open meanwhile and answers 503 until the first body. */
static void sampler_facts(struct sampler *s)
{
	for (unsigned i = 0; i < s->nsel; i++) {
		vramz_gpu_details(s->ctx, s->sel[i]);
		s->info[s->sel[i]] = *vramz_gpu(s->ctx, s->sel[i]);
		if (s->diag)
			vramz_diag_set_gpu_info(s->diag, vramz_gpu(s->ctx, s->sel[i]), 1);
	}
}

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	sampler_facts(s);
	if (serve_tick(s) < 0)
		cli_err("serve: out of memory rendering metrics");
	int64_t next = ticker_advance(s->tk);
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		struct timespec ts = {.tv_sec = next / 1000000000, .tv_nsec = next % 1000000000};
		int rc = pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		if (s->stop)
			break;
		if (rc != ETIMEDOUT)
			continue;
		pthread_mutex_unlock(&s->lock);
		if (serve_tick(s) < 0)
			cli_err("serve: out of memory rendering metrics; keeping the last body");
		next = ticker_advance(s->tk);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static int sampler_init(struct sampler *s, struct ticker *tk)
{
	vramz_ctx *ctx = ticker_ctx(tk);
	s->tk = tk;
	s->ctx = ctx;
	s->ngpus = vramz_gpu_count(ctx);
	s->nsel = vramz_selected_count(ctx);
	s->info = calloc(s->ngpus ? s->ngpus : 1, sizeof *s->info);
	s->sel = calloc(s->nsel ? s->nsel : 1, sizeof *s->sel);
	s->nbk = vramz_backend_count(ctx);
	s->bk = calloc(s->nbk ? s->nbk : 1, sizeof *s->bk);
	if (!s->info || !s->sel || !s->bk)
		return -1;
	for (unsigned k = 0; k < s->nbk; k++)
		s->bk[k] = *vramz_backend(ctx, k);
	for (unsigned i = 0; i < s->nsel; i++)
		s->sel[i] = vramz_selected_index(ctx, i);
	for (unsigned i = 0; i < s->ngpus; i++)
		s->info[i] = *vramz_gpu(ctx, i);
	s->was_up = 1;
	s->st.sample_duration_s = -1;
	prom_buf_init(&s->body);
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	return 0;
}

static void sampler_free(struct sampler *s)
{
	free(s->info);
	free(s->sel);
	free(s->bk);
	free(s->device);
	vramz_diag_free(s->diag);
	serve_web_free(s->web);
	prom_buf_free(&s->body);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
}

/* dcgm-exporter's labels that are not facts of a GPU: Hostname (the
 * Kubernetes node name when the pod is given NODE_NAME, as dcgm-exporter
 * reads it, else the host name) and each NVIDIA GPU's device node. */
static int dcgm_labels(struct sampler *s)
{
	const char *node = getenv("NODE_NAME");
	if (node && *node)
		snprintf(s->hostname, sizeof s->hostname, "%s", node);
	else if (gethostname(s->hostname, sizeof s->hostname - 1))
		s->hostname[0] = 0;
	s->device = calloc(s->ngpus ? s->ngpus : 1, sizeof *s->device);
	if (!s->device)
		return -1;
	for (unsigned i = 0; i < s->ngpus; i++)
		if (!strcmp(s->info[i].vendor, "nvidia"))
			prom_dcgm_device(proc_root(), s->info[i].pci_bus_id, s->device[i]);
	return 0;
}

/* What the command line asked for. */
struct serve_args {
	const char *listen;
	int64_t interval_ms, slow_ms;
	int no_diag, procs, once, dcgm;
	const char *dcgm_host_label; /* --dcgm-hostname-label */
	unsigned max_conn, max_per_ip, timeout_s, threads;
	int no_web;              /* --no-web: no page, no /api */
	unsigned max_streams;    /* --max-streams */
	unsigned max_streams_ip; /* --max-streams-per-ip */
	int64_t history_ms;      /* --history */
	const struct serve_webconf *web; /* NULL: plain HTTP, no auth */
};

static void web_stop(void *web)
{
	serve_web_shutdown(web);
}

/* How often the web configuration's files are looked at (a stat each):
 * a renewed certificate is served within this. */
#define WEBCONF_POLL_MS 1000

/* --web-config while serving: read again when it or a file it names
 * changes, as exporter-toolkit reads it on each request. */
struct webwatch {
	const char *path;
	const struct serve_webconf *cur; /* in force: the start's or latest */
	struct serve_webconf latest;     /* the last one read again; owned */
	struct serve_webconf_stamp seen;
};

static void say_warnings(const struct serve_webconf *wc)
{
	char lines[4][256];
	unsigned n = serve_tls_warnings(wc, time(NULL), lines, 4);
	for (unsigned i = 0; i < n; i++)
		cli_err("serve: warning: %s", lines[i]);
}

/* One look: a change is read whole, and put in force or, if broken,
 * said in one line while the last good one stays. */
static void webwatch_poll(struct webwatch *w, struct serve_http *http)
{
	struct serve_webconf_stamp st;
	/* stamped before reading: a change during the read shows next time */
	serve_webconf_stamp(w->path, w->cur, &st);
	if (st.h == w->seen.h)
		return;
	w->seen = st;
	struct serve_webconf next;
	char err[512];
	if (serve_webconf_load(&next, w->path, err, sizeof err)) {
		cli_err("serve: %s; keeping the configuration in force", err);
		return;
	}
	if (next.content == w->cur->content) { /* touched, not changed */
		serve_webconf_free(&next);
		return;
	}
	if (serve_http_reload(http, &next, err, sizeof err)) {
		cli_err("serve: %s; keeping the configuration in force", err);
		serve_webconf_free(&next);
		return;
	}
	cli_err("serve: %s changed: its new settings are in force (%u user%s%s)", w->path,
		next.nusers, next.nusers == 1 ? "" : "s", next.tls ? ", TLS" : "");
	say_warnings(&next);
	if (w->cur == &w->latest)
		serve_webconf_free(&w->latest);
	w->latest = next;
	w->cur = &w->latest;
}

/* Serves until SIGINT or SIGTERM: the HTTP side, then the sampler thread. */
static int serve_forever(struct sampler *s, const struct serve_args *a)
{
	/* Signals go to the main thread's sigwait only: block them before any
	 * thread (MHD's included) is created, so those inherit the mask. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct serve_http_opts ho = {.listen = a->listen, .max_connections = a->max_conn,
				     .max_per_ip = a->max_per_ip, .timeout_s = a->timeout_s,
				     .threads = a->threads, .web = a->web};
	if (s->web) {
		ho.route = serve_web_route;
		ho.route_stop = web_stop;
		ho.route_cls = s->web;
		ho.streams = 1;
	}
	char err[512];
	/* the port opens before the first sample: a slow driver (seconds for
	 * the first reads) must not look like a dead exporter; until the
	 * first body /metrics and /health answer 503 "no sample yet" */
	int hrc = serve_http_start(&s->http, &ho, err, sizeof err);
	if (hrc < 0) {
		cli_err("serve: %s", err);
		return hrc == SERVE_HTTP_EUSAGE ? EXIT_USAGE : EXIT_FAIL;
	}
	if (a->web)
		say_warnings(a->web);
	int tls = a->web && a->web->tls, users = a->web && a->web->nusers;
	int certs = tls && a->web->client_auth != SERVE_CLIENT_NONE;
	fprintf(stderr, "vramz serve: listening on http%s://%s/metrics (%u GPU%s, every %lld ms%s%s%s)\n",
		tls ? "s" : "", serve_http_address(s->http), s->nsel, s->nsel == 1 ? "" : "s",
		(long long)a->interval_ms, a->procs ? ", with processes" : "",
		users ? ", basic auth" : "", certs ? ", client certificates" : "");
	fflush(stderr);

	pthread_t th;
	if (pthread_create(&th, NULL, sampler_main, s)) {
		cli_err("serve: cannot start the sampler thread");
		serve_http_stop(s->http);
		return EXIT_FAIL;
	}
	struct webwatch w = {.path = a->web ? a->web->path : NULL, .cur = a->web};
	if (a->web)
		serve_webconf_stamp(w.path, w.cur, &w.seen);
	for (;;) {
		struct timespec poll = {.tv_sec = WEBCONF_POLL_MS / 1000,
					.tv_nsec = WEBCONF_POLL_MS % 1000 * 1000000L};
		if (sigtimedwait(&sigs, NULL, a->web ? &poll : NULL) >= 0)
			break;
		if (errno != EAGAIN && errno != EINTR)
			break;
		if (a->web)
			webwatch_poll(&w, s->http);
	}
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(th, NULL);
	serve_http_stop(s->http);
	if (w.cur == &w.latest)
		serve_webconf_free(&w.latest);
	return EXIT_OK;
}

/* The live page's side (serve/web.h); its responses are libmicrohttpd's,
 * so the library is loaded first.  -1 said on stderr. */
static int web_start(struct sampler *s, const struct serve_args *a)
{
	char host[256] = "", err[256];
	if (mhd_dl_load(err, sizeof err)) {
		cli_err("serve: %s", err);
		return -1;
	}
	if (gethostname(host, sizeof host - 1))
		host[0] = 0;
	struct serve_web_opts wo = {.max_streams = a->max_streams,
				    .max_streams_per_ip = a->max_streams_ip, .history_ms = a->history_ms,
				    .interval_ms = a->interval_ms, .hostname = host};
	s->web = serve_web_new(&wo);
	if (!s->web)
		cli_err("serve: out of memory");
	return s->web ? 0 : -1;
}

/* Opens the GPUs and the diagnosis engine, then serves (or prints one
 * body with --once). */
static int serve_run(const struct serve_args *a)
{
	/* the PCIe link state costs ~30 us a GPU: cheap at 1 s, and a link that
	 * trained down is worth an alert */
	/* per-process utilization feeds the idle-holder diagnosis too; it is
	 * read at most every 5 s a GPU, and not on idle GPUs */
	struct ticker_opts to = {.cmd = "serve", .interval_ms = a->interval_ms,
				 .slow_interval_ms = a->slow_ms,
				 .flags = VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_MIG | VRAMZ_SAMPLE_LINK |
					  (a->procs || !a->no_diag ? VRAMZ_SAMPLE_PROC_UTIL : 0),
				 .daemon = 1, .events = 1 /* Xid and ECC events: src/evwatch.c */};
	struct ticker *tk;
	int ex = ticker_open(&tk, &to);
	if (ex)
		return ex;
	struct sampler s = {0};
	if (sampler_init(&s, tk) < 0) {
		cli_err("serve: out of memory");
		sampler_free(&s);
		ticker_close(tk);
		return EXIT_FAIL;
	}
	if (!a->no_diag) {
		vramz_diag_config cfg;
		struct diag_cmd_conf cc = {0};
		vramz_diag_config_defaults(&cfg);
		ex = diagconf_load(&cfg, &cc); /* the thresholds of watch and analyze */
		cfg.proc_root = "/proc";
		int drc = ex ? 0 : vramz_diag_create(&s.diag, &cfg);
		if (ex || drc < 0) {
			if (!ex)
				cli_err("serve: %s", drc == VRAMZ_ENOMEM ? "out of memory"
								  : vramz_diag_error(s.diag));
			vramz_diag_free(s.diag);
			s.diag = NULL;
			sampler_free(&s);
			ticker_close(tk);
			return ex ? ex : EXIT_FAIL;
		}
	}
	s.prom_flags = (a->procs ? PROM_PROCS : 0) | (a->dcgm ? PROM_DCGM : 0);
	s.hostname_label = a->dcgm_host_label;
	if (a->dcgm && dcgm_labels(&s) < 0) {
		cli_err("serve: out of memory");
		sampler_free(&s);
		ticker_close(tk);
		return EXIT_FAIL;
	}

	if (!a->once && !a->no_web && web_start(&s, a) < 0) {
		sampler_free(&s);
		ticker_close(tk);
		return EXIT_FAIL;
	}
	if (a->once) {
		sampler_facts(&s);
		ex = serve_tick(&s) < 0 ? EXIT_FAIL : EXIT_OK;
		if (!ex)
			fwrite(s.body.p, 1, s.body.len, stdout);
		/* the body says vramz_up 0, tick said why on stderr: a check
		 * that runs --once must see the failure in the exit status */
		if (!ex && !s.st.up)
			ex = EXIT_FAIL;
	} else {
		ex = serve_forever(&s, a);
	}
	sampler_free(&s);
	ticker_close(tk);
	return ex;
}

static struct serve_args sa = {.listen = SERVE_DEFAULT_LISTEN, .interval_ms = 1000, .slow_ms = 10000,
			       .max_conn = 128, .max_per_ip = 32, .timeout_s = 10, .threads = 2,
			       .max_streams = 8, .max_streams_ip = 4, .history_ms = 5 * 60 * 1000};
static const char *web_config;

const struct opt serve_opts[] = {
	{'l', "listen", OPT_STR, &sa.listen, "ADDR:PORT",
	 "address to listen on (default " SERVE_DEFAULT_LISTEN "; [::1]:PORT for IPv6; port 0 picks one)"},
	OPT_SAMPLE_INTERVAL(&sa.interval_ms, "sample every DURATION (default 1s)"),
	{0, "slow-interval", OPT_DURATION, &sa.slow_ms, NULL,
	 "read PCIe throughput and VRAM health every DURATION, energy every third time (default 10s; 0: never)"},
	{'p', "procs", OPT_FLAG, &sa.procs, NULL,
	 "per-process series (one per pid and GPU: mind the cardinality)"},
	{0, "web-config", OPT_STR, &web_config, "FILE",
	 "TLS and basic auth from an exporter-toolkit web config file (docs/exporter.md)"},
	{0, "dcgm-names", OPT_FLAG, &sa.dcgm, NULL,
	 "also serve dcgm-exporter's series (DCGM_FI_DEV_*: MiB, W, %, MHz)"},
	{0, "dcgm-hostname-label", OPT_STR, &sa.dcgm_host_label, "NAME",
	 "with --dcgm-names, the host name's label (default Hostname; newer dcgm-exporters say hostname)"},
	{0, "max-connections", OPT_UINT, &sa.max_conn, "N", "concurrent connections in all (default 128)"},
	{0, "max-per-ip", OPT_UINT, &sa.max_per_ip, "N", "concurrent connections per client (default 32)"},
	{0, "timeout", OPT_UINT, &sa.timeout_s, "SECONDS", "close idle connections after (default 10)"},
	{0, "threads", OPT_UINT, &sa.threads, "N", "HTTP worker threads (default 2)"},
	{0, "no-web", OPT_FLAG, &sa.no_web, NULL,
	 "no live page: / is a plain landing page, no /api/v1/status or /api/v1/events"},
	{0, "max-streams", OPT_UINT, &sa.max_streams, "N",
	 "live page event streams open at once; the next gets 503 (default 8)"},
	{0, "max-streams-per-ip", OPT_UINT, &sa.max_streams_ip, "N",
	 "of them from one client address (an IPv6 /64); the next gets 429 (default 4)"},
	{0, "history", OPT_DURATION, &sa.history_ms, NULL,
	 "keep DURATION of ticks for the page's charts (default 5m; at most 1h, 3600 ticks)"},
	{0, "once", OPT_FLAG, &sa.once, NULL, "print one /metrics body to stdout and exit (1: no GPU could be read)"},
	{0, "no-diagnose", OPT_FLAG, &sa.no_diag, NULL, "no leak / idle / orphan series (no diagnosis engine)"},
	OPT_GPUS,
	OPT_END,
};
const char serve_synopsis[] = "[OPTIONS]";
const char serve_about[] =
	"Serves Prometheus metrics of every selected GPU over HTTP, and a live page for a browser\n"
	"at / (docs/exporter.md).";

/* A Prometheus label name of our own: [a-zA-Z_][a-zA-Z0-9_]*, not the
 * reserved __ prefix, and none of the DCGM series' other labels (a label
 * twice makes the whole body invalid). */
static int label_name_ok(const char *s)
{
	static const char *const taken[] = {"gpu", "UUID", "pci_bus_id", "device", "modelName",
					    "DCGM_FI_DRIVER_VERSION"};
	for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++)
		if (!strcmp(s, taken[i]))
			return 0;
	if (!*s || (s[0] == '_' && s[1] == '_') || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return 0;
	return 1;
}

int cmd_serve(const struct cmd_args *args)
{
	(void)args;
	if (sa.dcgm_host_label && !sa.dcgm) {
		cli_err("serve: --dcgm-hostname-label needs --dcgm-names");
		return EXIT_USAGE;
	}
	if (sa.dcgm_host_label && !label_name_ok(sa.dcgm_host_label)) {
		cli_err("serve: --dcgm-hostname-label '%s' is no free Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not another DCGM label)",
			sa.dcgm_host_label);
		return EXIT_USAGE;
	}
	if (sa.slow_ms != 0 && sa.slow_ms < sa.interval_ms) {
		cli_err("serve: --slow-interval must be 0 or at least --interval");
		return EXIT_USAGE;
	}
	if (!sa.max_conn || !sa.max_per_ip || !sa.threads || sa.threads > 64 || !sa.timeout_s) {
		cli_err("serve: --max-connections, --max-per-ip, --timeout and --threads must be positive (threads at most 64)");
		return EXIT_USAGE;
	}
	if (!sa.max_streams || sa.max_streams > sa.max_conn) {
		cli_err("serve: --max-streams must be positive and at most --max-connections");
		return EXIT_USAGE;
	}
	if (!sa.max_streams_ip) {
		cli_err("serve: --max-streams-per-ip must be positive");
		return EXIT_USAGE;
	}
	/* shorter than --interval keeps one tick (a long --interval must
	 * not need a --history as well) */
	if (sa.history_ms <= 0 || sa.history_ms > SERVE_HISTORY_MAX_MS) {
		cli_err("serve: --history must be positive and at most 1h");
		return EXIT_USAGE;
	}
	/* read before any GPU is: a mistake in it costs no driver start */
	struct serve_webconf web = {0};
	if (web_config) {
		char err[512];
		if (serve_webconf_load(&web, web_config, err, sizeof err)) {
			cli_err("serve: %s", err);
			return EXIT_USAGE;
		}
		sa.web = &web;
	}
	int ex = serve_run(&sa);
	serve_webconf_free(&web);
	return ex;
}
