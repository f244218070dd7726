/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-daemon.c - `vramz daemon`: one sampler for the whole machine.  It
 * samples the selected GPUs as serve does (src/ticker.c: the slow readings
 * on their own thread, the diagnosis engine fed every tick) and publishes
 * each tick into the segment of its runtime directory (lib/segment_write.c,
 * layout in docs/daemon.md), where status, ps, top, serve, log and the
 * Python package read it without touching NVML.
 *
 * One publisher per directory: an exclusive flock on DIR/daemon.lock,
 * which holds the owner's pid so a second daemon can say who has it.  On
 * SIGTERM/SIGINT the segment is marked stopped and unlinked; readers that
 * have it mapped keep a valid (stopped) map, and nothing stale that looks
 * live is left.  When /proc is mounted hidepid and the daemon runs as root,
 * it publishes two files: `segment` with other users' /proc fields left
 * out, and `segment.full` (mode 0600) for root.  A full disk or tmpfs is
 * reported once, and sampling goes on; publishing resumes when it can.
 *
 * Every tick the daemon checks that its directory, its lock file and each
 * segment are still where readers look (daemon_watch: an lstat and an
 * fstatat each).  A directory removed or replaced is made again, the lock
 * taken again there (another daemon holding it by then: this one stops)
 * and the segments republished; a segment or lock file removed or replaced
 * alone is made again.  Each event is said once.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "cli.h"
#include "clock.h"
#include "commands.h"
#include "analyze/diagconf.h"
#include "rundir.h"
#include "safefile.h"
#include "segment.h"
#include "ticker.h"
#include "vramz/daemon.h"
#include "vramz/diagnose.h"

static volatile sig_atomic_t stop_flag;

static void daemon_on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* 1 when /proc is mounted with hidepid (other users' /proc/PID hidden).
 * VRAMZ_TEST_HIDEPID=1 says so without a remount: the tests' way to run
 * the redacting path (mounting /proc needs more than CI gives). */
static int proc_hidepid(void)
{
	const char *t = getenv("VRAMZ_TEST_HIDEPID");
	if (t && *t)
		return strcmp(t, "0") != 0;
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[2048];
	int hide = 0;
	while (f && fgets(line, sizeof line, f)) {
		/* ... mount-point ... - fstype source super-options */
		char *sep = strstr(line, " - ");
		if (!sep || !strstr(line, " /proc ") || strncmp(sep, " - proc ", 8))
			continue;
		char *h = strstr(sep, "hidepid=");
		if (h) {
			h += 8;
			hide = !(h[0] == '0' || !strncmp(h, "off", 3));
		}
	}
	if (f)
		fclose(f);
	return hide;
}

/* Takes DIR/daemon.lock; on contention says who holds it.  Returns the fd,
 * or -1 (the message printed). */
static int take_lock(const char *dir, int dirfd)
{
	char path[600], buf[32] = "";
	snprintf(path, sizeof path, "%s/%s", dir, VRAMZ_LOCK_NAME);
	char err[700];
	int fd = safefile_open(dirfd, path, SAFEFILE_WRITE, 0644, err, sizeof err);
	if (fd < 0) {
		cli_err("daemon: %s", err);
		return -1;
	}
	struct stat st = {0};
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		/* in a sticky shared directory: another user's file, not ours to lock */
		cli_err("daemon: %s: not a file of yours (uid %u); not publishing there", path,
			(unsigned)st.st_uid);
		close(fd);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		buf[strcspn(buf, "\n")] = 0;
		cli_err("daemon: %s is already published by %s%s (lock %s)", dir,
			*buf ? "pid " : "another daemon", buf, path);
		close(fd);
		return -1;
	}
	char pid[32];
	int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)len, 0) != len) {
		/* the lock holds without the pid; a rival just cannot name us */
	}
	return fd;
}

/* Opens (makes) the runtime directory under the rule readers apply
 * (lib/rundir_open.c): the descriptor every file is made relative to, or
 * -1 (the message printed). */
static int open_dir(const char *dir, char *err, size_t errlen)
{
	struct rundir rd;
	if (rundir_open(dir, geteuid() == 0 ? 0755 : 0700, RUNDIR_NO_UID, &rd, err, errlen))
		return -1;
	return rd.fd;
}

struct pub {
	const char *name;
	unsigned mode;
	int redact;
	struct seg_writer *w;
	int failing;          /* said so once; says again when it works */
	int again;            /* made again after a removal: say when out */
};

/* what readers find at a name: the file a descriptor holds */
struct file_id {
	dev_t dev;
	ino_t ino;
};

struct daemon {
	const char *dir;
	int dirfd, lockfd;
	struct file_id dir_id, lock_id;
	int lost;                /* the directory is gone: said, making it */
	struct seg_static st;
	unsigned char *present;  /* st's arrays, owned here */
	vramz_link *links;
	vramz_gpu_info *info;
	struct pub pubs[2];
	unsigned npubs;
};

static void publish(struct daemon *d, const vramz_snapshot *snap, int rc, const vramz_finding *f,
		    unsigned nf)
{
	char err[600];
	for (unsigned i = 0; i < d->npubs && !d->lost; i++) {
		struct pub *p = &d->pubs[i];
		int r = 0;
		if (!p->w) {
			struct seg_static st = d->st;
			if (p->redact)
				st.flags |= SEG_FL_REDACTED;
			r = seg_writer_create(&p->w, d->dirfd, d->dir, p->name, p->mode, &st,
					      snap->proc_count + 16, nf + 16, err, sizeof err);
			if (r < 0) {
				seg_writer_close(p->w);
				p->w = NULL;
			}
		}
		if (r == 0)
			r = seg_writer_publish(p->w, snap, rc, f, nf, err, sizeof err);
		if (r < 0 && !p->failing) {
			cli_err("daemon: cannot publish: %s; still sampling, publishing again when it can", err);
			p->failing = 1;
		} else if (r == 0 && (p->failing || p->again)) {
			cli_err("daemon: publishing %s/%s again", d->dir, p->name);
			p->failing = p->again = 0;
		}
	}
}

static int id_of(int fd, struct file_id *id)
{
	struct stat st;
	if (fstat(fd, &st))
		return -1;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

static int same_file(const struct stat *st, const struct file_id *id)
{
	return st->st_dev == id->dev && st->st_ino == id->ino;
}

/* Lets go of every segment file (removed or replaced under us). */
static void drop_pubs(struct daemon *d)
{
	for (unsigned i = 0; i < d->npubs; i++) {
		seg_writer_abandon(d->pubs[i].w);
		d->pubs[i].w = NULL;
		d->pubs[i].again = 1;
	}
}

/* The lock in d's directory taken again (its file removed or replaced, or
 * the directory made again): 0, or -1 when another daemon has it now. */
static int relock(struct daemon *d, int dirfd)
{
	int fd = take_lock(d->dir, dirfd);
	if (fd < 0) {
		cli_err("daemon: stopping: one publisher per directory");
		return -1;
	}
	close(d->lockfd);
	d->lockfd = fd;
	id_of(fd, &d->lock_id);
	return 0;
}

/* Run before each publish: see the file comment.  0, or -1 to stop. */
static int daemon_watch(struct daemon *d)
{
	struct stat st;
	char err[600];
	if (d->lost || lstat(d->dir, &st) || !same_file(&st, &d->dir_id)) {
		if (!d->lost) {
			cli_err("daemon: %s was removed or replaced; making it again", d->dir);
			drop_pubs(d);
			d->lost = 1;
		}
		int fd = open_dir(d->dir, err, sizeof err);
		if (fd < 0) {
			if (d->lost == 1)
				cli_err("daemon: %s; trying again every tick", err);
			d->lost = 2;
			return 0;
		}
		if (relock(d, fd)) {
			close(fd);
			return -1;
		}
		close(d->dirfd);
		d->dirfd = fd;
		id_of(fd, &d->dir_id);
		d->lost = 0;
		return 0;
	}
	if (fstatat(d->dirfd, VRAMZ_LOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) || !same_file(&st, &d->lock_id)) {
		cli_err("daemon: %s/%s was removed or replaced; taking it again", d->dir, VRAMZ_LOCK_NAME);
		if (relock(d, d->dirfd))
			return -1;
	}
	for (unsigned i = 0; i < d->npubs; i++) {
		struct pub *p = &d->pubs[i];
		int c = seg_writer_check(p->w);
		if (!c)
			continue;
		cli_err("daemon: %s/%s was %s; publishing it again", d->dir, p->name,
			c == 1 ? "removed" : "replaced");
		seg_writer_abandon(p->w);
		p->w = NULL;
		p->again = 1;
	}
	return 0;
}

static int64_t interval_ms = 1000, slow_ms = 10000;
static int procs, no_diag;
static const char *dir_opt;

const struct opt daemon_opts[] = {
	OPT_SAMPLE_INTERVAL(&interval_ms, "sample and publish every DURATION (default 1s)"),
	{0, "procs", OPT_FLAG, &procs, NULL, "also publish the processes holding VRAM, attributed"},
	OPT_GPUS,
	{0, "runtime-dir", OPT_STR, &dir_opt, "DIR",
	 "publish in DIR (default: /run/vramz as root, else $XDG_RUNTIME_DIR/vramz)"},
	{0, "slow-interval", OPT_DURATION, &slow_ms, "D",
	 "PCIe link and throughput and VRAM health every D, energy every third time; 0: never (default 10s)"},
	{0, "no-diagnose", OPT_FLAG, &no_diag, NULL, "publish no findings (no diagnosis engine)"},
	OPT_END,
};
const char daemon_synopsis[] = "[-i INTERVAL] [--procs] [-g LIST] [--runtime-dir DIR]";
const char daemon_about[] =
	"Samples once for the whole machine and publishes every tick in shared\n"
	"memory; status, ps, info, topo, pick, top, watch, serve and log read it\n"
	"instead of NVML (docs/daemon.md).  Runs in the foreground.";

/* The intervals and the runtime directory into dir; 0, or the exit code. */
static int daemon_place(char *dir, size_t len)
{
	if (slow_ms != 0 && slow_ms < interval_ms) {
		cli_err("daemon: --slow-interval must be 0 or at least --interval");
		return EXIT_USAGE;
	}
	if (dir_opt) {
		snprintf(dir, len, "%s", dir_opt);
	} else if (vramz_runtime_dir(dir, len) < 0) {
		cli_err("daemon: no runtime directory: XDG_RUNTIME_DIR is not set (give --runtime-dir DIR)");
		return EXIT_USAGE;
	}
	return 0;
}

/* What every reader needs once: each GPU's static facts (the slow ones
 * too) and the topology between the selected GPUs, into d->st. */
static int daemon_facts(vramz_ctx *ctx, struct daemon *d)
{
	unsigned n = vramz_gpu_count(ctx), nsel = vramz_selected_count(ctx);
	unsigned char *present = d->present = calloc(n, 1);
	vramz_link *links = d->links = calloc((size_t)n * n, sizeof *links);
	vramz_gpu_info *info = d->info = calloc(n, sizeof *info);
	if (!present || !links || !info) {
		cli_err("daemon: out of memory");
		return EXIT_FAIL;
	}
	for (unsigned i = 0; i < nsel; i++) {
		unsigned idx = vramz_selected_index(ctx, i);
		vramz_gpu_details(ctx, idx);
		present[idx] = 1;
	}
	for (unsigned a = 0; a < n; a++) {
		info[a] = *vramz_gpu(ctx, a);
		for (unsigned b = 0; b < n; b++)
			if (present[a] && present[b])
				vramz_topology(ctx, a, b, &links[(size_t)a * n + b]);
	}
	d->st.gpu_count = n;
	d->st.info = info;
	d->st.present = present;
	d->st.links = links;
	return 0;
}

/* The engine with the config file's thresholds, unless --no-diagnose;
 * 0 (*diag NULL without one), or the exit code. */
static int daemon_diag(vramz_ctx *ctx, vramz_diag **diag)
{
	*diag = NULL;
	if (no_diag)
		return 0;
	vramz_diag_config cfg;
	struct diag_cmd_conf cc = {0};
	vramz_diag_config_defaults(&cfg);
	int ex = diagconf_load(&cfg, &cc);
	if (ex)
		return ex;
	cfg.keep_ended = 0;
	cfg.proc_root = "/proc";
	diagconf_live_interval(&cfg, interval_ms);
	if (!(*diag = vramz_diag_new(&cfg))) {
		cli_err("daemon: invalid thresholds or out of memory");
		return EXIT_FAIL;
	}
	for (unsigned i = 0, nsel = vramz_selected_count(ctx); i < nsel; i++)
		vramz_diag_set_gpu_info(*diag, vramz_gpu(ctx, vramz_selected_index(ctx, i)), 1);
	return 0;
}

/* Samples, diagnoses and publishes until a signal; the exit code. */
/* The agents of the daemon's user leave tombstones in its directory
 * (docs/python.md): swept every minute, by the agents' own rule. */
static void sweep_agents(struct daemon *d, int64_t *last_ms)
{
	int64_t now = clock_real_ms();
	if (*last_ms && now - *last_ms < 60000)
		return;
	*last_ms = now;
	agent_sweep(d->dirfd, NULL, NULL, now / 1000, AGENT_TOMBSTONE_KEEP_S);
}

static int daemon_loop(struct daemon *d, struct ticker *tk, vramz_diag *diag)
{
	int was_ok = 1;
	int64_t swept_ms = 0;
	while (!stop_flag) {
		sweep_agents(d, &swept_ms);
		const vramz_snapshot *snap;
		vramz_ctx *src = ticker_ctx(tk);
		int rc = ticker_sample(tk, &snap, &src);
		if (rc == VRAMZ_ENOMEM) {
			cli_err("daemon: out of memory");
			return EXIT_FAIL;
		}
		int ok = rc == 0 || rc == VRAMZ_ELOST;
		if (ok != was_ok) {
			if (!ok)
				cli_err("daemon: sampling failed: %s%s%s", vramz_strerror(rc),
					*vramz_last_error(src) ? ": " : "", vramz_last_error(src));
			else
				cli_err("daemon: sampling works again");
			was_ok = ok;
		}
		const vramz_finding *f = NULL;
		unsigned nf = 0;
		if (diag && ok && vramz_diag_feed(diag, snap) >= 0)
			nf = vramz_diag_findings(diag, &f);
		else if (diag)
			nf = vramz_diag_findings(diag, &f);
		if (daemon_watch(d))
			return EXIT_FAIL;
		publish(d, snap, rc, f, nf);
		ticker_sleep(tk, &stop_flag, 0);
	}
	return EXIT_OK;
}

int cmd_daemon(const struct cmd_args *args)
{
	(void)args;
	char dir[512];
	int ex = daemon_place(dir, sizeof dir);
	if (ex)
		return ex;
	char err[600];
	int dirfd = open_dir(dir, err, sizeof err);
	if (dirfd < 0) {
		cli_err("daemon: %s", err);
		return EXIT_FAIL;
	}
	int lockfd = take_lock(dir, dirfd);
	if (lockfd < 0) {
		close(dirfd);
		return EXIT_FAIL;
	}

	unsigned flags = VRAMZ_SAMPLE_MIG | VRAMZ_SAMPLE_LINK |
			 (procs ? VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_PROC_UTIL : 0);
	struct ticker_opts to = {.cmd = "daemon", .interval_ms = interval_ms,
				 .slow_interval_ms = slow_ms, .flags = flags, .daemon = 0,
				 .events = 1};
	struct ticker *tk;
	if ((ex = ticker_open(&tk, &to))) {
		close(lockfd);
		close(dirfd);
		return ex;
	}
	vramz_ctx *ctx = ticker_ctx(tk);
	unsigned nsel = vramz_selected_count(ctx);
	struct daemon d = {.dir = dir, .dirfd = dirfd, .lockfd = lockfd};
	id_of(dirfd, &d.dir_id);
	id_of(lockfd, &d.lock_id);
	vramz_diag *diag = NULL;
	/* the slow static facts and the topology: once, for every reader */
	if ((ex = daemon_facts(ctx, &d)) || (ex = daemon_diag(ctx, &diag)))
		goto out;
	d.st.flags = (procs ? SEG_FL_PROCS : 0) | (diag ? SEG_FL_FINDINGS : 0);
	d.st.interval_ms = (unsigned)interval_ms;
	d.st.slow_interval_ms = (unsigned)slow_ms;
	d.st.sample_flags = flags;
	d.st.sys = *vramz_system(ctx);
	int split = procs && geteuid() == 0 && proc_hidepid();
	if (split) /* root's own view, then everyone's without other users' /proc */
		d.pubs[d.npubs++] = (struct pub){VRAMZ_SEGMENT_FULL_NAME, 0600, 0, NULL, 0};
	else /* a previous run's, now misleading */
		rundir_unlink_own(dirfd, VRAMZ_SEGMENT_FULL_NAME);
	d.pubs[d.npubs++] = (struct pub){VRAMZ_SEGMENT_NAME, 0644, split, NULL, 0};

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = daemon_on_signal; /* no SA_RESTART: the sleep must end */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file size limit is an error to report, not death */

	fprintf(stderr, "vramz daemon: publishing %u GPU%s every %lld ms%s to %s/%s (pid %ld)%s\n",
		nsel, nsel == 1 ? "" : "s", (long long)interval_ms, procs ? " with processes" : "",
		dir, VRAMZ_SEGMENT_NAME, (long)getpid(),
		split ? "; /proc is hidepid: other users' processes redacted" : "");
	fflush(stderr);
	ex = daemon_loop(&d, tk, diag);
	for (unsigned i = 0; i < d.npubs; i++)
		seg_writer_close(d.pubs[i].w);
	fprintf(stderr, "vramz daemon: stopped; %s/%s removed\n", dir, VRAMZ_SEGMENT_NAME);
out:
	vramz_diag_free(diag);
	free(d.present);
	free(d.links);
	free(d.info);
	ticker_close(tk);
	close(d.lockfd);
	close(d.dirfd);
	return ex;
}
