/* SPDX-License-Identifier: Apache-2.0 */
/* state.c - the fake NVML's one live world, its lock, and the bookkeeping
 * every call shares.
 *
 * NVML is process-global and thread-safe, so the fake is too: one mutex
 * guards the parsed scenario, the init reference count, the clock that
 * growth rates run on, and the counters behind `lost` and `error ...
 * after=`.  Each entry point brackets its body with fake_enter* and
 * fake_leave; those do what real NVML does before touching a device
 * (initialized? handle valid? GPU lost?) plus what only a test double does:
 * trace the call, inject a scripted error, sleep a scripted latency, and
 * re-read the scenario when the test changed it.  Latency sleeps happen with
 * the lock released, so a slow call on one thread does not stall another
 * thread's fast calls, as with the real library.
 */
#include "fake.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* nvmlDevice_t points into these arrays; only the address matters. */
struct nvmlDevice_st {
	unsigned char unused;
};
static struct nvmlDevice_st gpu_handles[FAKE_MAX_GPUS];
static struct nvmlDevice_st mig_handles[FAKE_MAX_GPUS * FAKE_MAX_MIG_PER_GPU];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	unsigned refs;                 /* nvmlInit_v2 minus nvmlShutdown */
	struct fake_world *w;          /* set while refs > 0 */
	char *path;                    /* scenario file, for reloads */
	struct stat st;                /* of path when last read */
	struct timespec t0;            /* CLOCK_MONOTONIC at first init, or FAKE_NVML_EPOCH */
	unsigned long mem_calls[FAKE_MAX_GPUS]; /* successful memory reads */
} g;

static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static int trace_fd = -1;

/* ---- tracing ------------------------------------------------------------- */

static void trace_open(void)
{
	const char *path = getenv("FAKE_NVML_TRACE");

	if (!path || !*path)
		return;
	trace_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (trace_fd < 0)
		fprintf(stderr, "fake-nvml: %s: %s\n", path, strerror(errno));
}

/* One write(2) per line on an O_APPEND descriptor: lines from several
 * threads or processes never interleave. */
static void trace(enum fake_fn fn, int index)
{
	char line[128];
	int n;

	pthread_once(&trace_once, trace_open);
	if (trace_fd < 0)
		return;
	if (index >= 0)
		n = snprintf(line, sizeof(line), "%s %d\n", fake_fn_names[fn], index);
	else
		n = snprintf(line, sizeof(line), "%s -\n", fake_fn_names[fn]);
	if (n > 0 && write(trace_fd, line, (size_t)n) < 0)
		return;
}

/* ---- time ---------------------------------------------------------------- */

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(a->tv_sec - b->tv_sec) + (double)(a->tv_nsec - b->tv_nsec) / 1e9;
}

double fake_elapsed_s(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ts_diff(&now, &g.t0);
}

static void sleep_us(unsigned us)
{
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- scenario loading ---------------------------------------------------- */

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Lock held.  A scenario that no longer parses leaves the old world in
 * place, reported once per change of the file. */
static void reload_if_changed(void)
{
	struct fake_world *w;
	struct stat st;
	char err[512];
	bool unreadable;

	if (stat(g.path, &st) || same_file(&st, &g.st))
		return;
	g.st = st;
	w = fake_world_load(g.path, &unreadable, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "fake-nvml: %s (keeping the previous scenario)\n", err);
		return;
	}
	fake_world_free(g.w);
	g.w = w;
}

/* The time base: the first init, or FAKE_NVML_EPOCH (Unix seconds, a
 * fraction allowed: `date +%s.%N`) when a test sets it, so that several
 * vramz processes and the real processes a scenario follows share one
 * clock (a leaker that must be full when its `sleep` ends, whatever
 * moment each process started).  A value that is not a number, or lies
 * in the future, is ignored: time then starts at this init. */
static void time_base(struct timespec *t0)
{
	const char *e = getenv("FAKE_NVML_EPOCH");
	struct timespec real;
	char *rest;
	double epoch_s, ago_s;

	clock_gettime(CLOCK_MONOTONIC, t0);
	if (!e || !*e)
		return;
	errno = 0;
	epoch_s = strtod(e, &rest);
	clock_gettime(CLOCK_REALTIME, &real);
	ago_s = (double)real.tv_sec + (double)real.tv_nsec / 1e9 - epoch_s;
	if (errno || *rest || !(ago_s > 0) || ago_s > 86400.0)
		return;
	long long ago_ns = (long long)(ago_s * 1e9);
	long long t0_ns = (long long)t0->tv_sec * 1000000000LL + t0->tv_nsec - ago_ns;
	t0->tv_sec = (time_t)(t0_ns / 1000000000LL);
	t0->tv_nsec = (long)(t0_ns % 1000000000LL);
	if (t0->tv_nsec < 0) {
		t0->tv_sec--;
		t0->tv_nsec += 1000000000L;
	}
}

static nvmlReturn_t first_init(void)
{
	const char *path = getenv("FAKE_NVML_SCENARIO");
	struct fake_world *w;
	struct stat st;
	char err[512];
	bool unreadable;

	/* No scenario is how tests say "this machine has no NVIDIA driver". */
	if (!path || !*path || stat(path, &st))
		return NVML_ERROR_DRIVER_NOT_LOADED;
	w = fake_world_load(path, &unreadable, err, sizeof(err));
	if (!w) {
		if (unreadable)
			return NVML_ERROR_DRIVER_NOT_LOADED;
		fprintf(stderr, "fake-nvml: %s\n", err);
		return NVML_ERROR_UNKNOWN;
	}
	if (w->init_error != NVML_SUCCESS) {
		nvmlReturn_t r = w->init_error;

		fake_world_free(w);
		return r;
	}
	g.path = strdup(path);
	if (!g.path) {
		fake_world_free(w);
		return NVML_ERROR_MEMORY;
	}
	g.w = w;
	g.st = st;
	time_base(&g.t0);
	memset(g.mem_calls, 0, sizeof(g.mem_calls));
	return NVML_SUCCESS;
}

nvmlReturn_t fake_init(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&lock);
	trace(FN_nvmlInit_v2, -1);
	if (!g.refs)
		r = first_init();
	if (r == NVML_SUCCESS)
		g.refs++;
	pthread_mutex_unlock(&lock);
	return r;
}

nvmlReturn_t fake_shutdown(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&lock);
	trace(FN_nvmlShutdown, -1);
	if (!g.refs) {
		r = NVML_ERROR_UNINITIALIZED;
	} else if (!--g.refs) {
		fake_world_free(g.w);
		free(g.path);
		g.w = NULL;
		g.path = NULL;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* ---- handles ------------------------------------------------------------- */

nvmlDevice_t fake_gpu_handle(unsigned index)
{
	return &gpu_handles[index];
}

nvmlDevice_t fake_mig_handle(unsigned mig_index)
{
	return &mig_handles[mig_index];
}

/* Splits a handle into a GPU index or a MIG index; false if it is neither. */
static bool decode(nvmlDevice_t d, int *gpu, int *mig)
{
	uintptr_t p = (uintptr_t)d;
	uintptr_t gb = (uintptr_t)gpu_handles, mb = (uintptr_t)mig_handles;

	*gpu = *mig = -1;
	if (p >= gb && p < gb + sizeof(gpu_handles))
		*gpu = (int)((p - gb) / sizeof(gpu_handles[0]));
	else if (p >= mb && p < mb + sizeof(mig_handles))
		*mig = (int)((p - mb) / sizeof(mig_handles[0]));
	return *gpu >= 0 || *mig >= 0;
}

/* ---- the call sandwich --------------------------------------------------- */

/* Lock held: what every call checks before its body. */
static nvmlReturn_t ready(struct fake_call *c)
{
	unsigned us;

	if (!g.refs)
		return NVML_ERROR_UNINITIALIZED;
	us = g.w->latency_us[c->fn];
	if (us) {
		pthread_mutex_unlock(&lock);
		sleep_us(us);
		pthread_mutex_lock(&lock);
		if (!g.refs)
			return NVML_ERROR_UNINITIALIZED;
	}
	if (c->flags & CALL_RELOAD)
		reload_if_changed();
	c->w = g.w;
	return NVML_SUCCESS;
}

/* Lock held: `error` rules, counting the calls they let through. */
static nvmlReturn_t scripted_error(struct fake_call *c)
{
	for (unsigned i = 0; i < c->w->nrules; i++) {
		struct fake_error_rule *r = &c->w->rules[i];
		unsigned long *hits = &r->hits[c->index + 1];

		if (r->fn != c->fn || (r->gpu >= 0 && r->gpu != c->index))
			continue;
		if (*hits < r->after) {
			++*hits;
			continue;
		}
		return r->code;
	}
	return NVML_SUCCESS;
}

static bool is_lost(unsigned index)
{
	long after = g.w->gpus[index].lost_after;

	if (after >= 0 && g.mem_calls[index] >= (unsigned long)after)
		return true;
	for (unsigned i = 0; i < g.w->nat; i++)
		if (g.w->at[i].kind == AT_LOST && g.w->at[i].gpu == index &&
		    g.w->at[i].t_s <= fake_elapsed_s())
			return true;
	return false;
}

bool fake_gpu_value(const struct fake_world *w, unsigned index, enum fake_gf f,
		    unsigned long long *out)
{
	const struct fake_gpu *gp = &w->gpus[index];
	bool has = gp->has[f];
	unsigned long long v = gp->v[f];
	double now = fake_elapsed_s();
	bool sbe = f == GF_ECC_SBE_VOL || f == GF_ECC_SBE_AGG;
	bool dbe = f == GF_ECC_DBE_VOL || f == GF_ECC_DBE_AGG;

	for (unsigned i = 0; i < w->nat; i++) {
		const struct fake_at *a = &w->at[i];

		if (a->gpu != index || a->t_s > now)
			continue;
		if ((a->kind == AT_SBE && sbe) || (a->kind == AT_DBE && dbe) ||
		    (a->kind == AT_ADD && a->f == f))
			v += a->v, has = true;
		else if (a->kind == AT_SET && a->f == f)
			v = a->v, has = true;
	}
	*out = v;
	return has;
}

bool fake_pause(struct fake_call *c, unsigned us)
{
	pthread_mutex_unlock(&lock);
	sleep_us(us);
	pthread_mutex_lock(&lock);
	c->w = g.w;
	return g.refs > 0;
}

static void begin(struct fake_call *c, enum fake_fn fn, unsigned flags)
{
	memset(c, 0, sizeof(*c));
	c->fn = fn;
	c->flags = flags;
	c->index = -1;
	pthread_mutex_lock(&lock);
	c->locked = true;
}

nvmlReturn_t fake_enter(struct fake_call *c, enum fake_fn fn, unsigned flags)
{
	nvmlReturn_t r;

	begin(c, fn, flags);
	trace(fn, -1);
	r = ready(c);
	return r ? r : scripted_error(c);
}

/* Lock held, world loaded: index is a GPU the scenario defines. */
static nvmlReturn_t device_checks(struct fake_call *c, unsigned index)
{
	if (index >= c->w->ngpus)
		return NVML_ERROR_INVALID_ARGUMENT;
	c->index = (int)index;
	c->gpu = &c->w->gpus[index];
	if (is_lost(index))
		return NVML_ERROR_GPU_IS_LOST;
	return scripted_error(c);
}

nvmlReturn_t fake_enter_index(struct fake_call *c, enum fake_fn fn,
			      unsigned index, unsigned flags)
{
	nvmlReturn_t r;

	begin(c, fn, flags);
	trace(fn, index < FAKE_MAX_GPUS ? (int)index : -1);
	r = ready(c);
	return r ? r : device_checks(c, index);
}

/* A MIG handle's trace and checks are its parent GPU's. */
nvmlReturn_t fake_enter_dev(struct fake_call *c, enum fake_fn fn,
			    nvmlDevice_t d, unsigned flags)
{
	struct fake_mig *mig = NULL;
	int gpu, mi;
	nvmlReturn_t r;

	begin(c, fn, flags);
	decode(d, &gpu, &mi);
	if (mi >= 0 && g.w && (unsigned)mi < g.w->nmigs)
		gpu = (int)g.w->migs[mi].parent;
	trace(fn, gpu);
	r = ready(c);
	if (r)
		return r;
	if (mi >= 0) {
		if ((unsigned)mi >= c->w->nmigs)
			return NVML_ERROR_INVALID_ARGUMENT;
		mig = &c->w->migs[mi];
		gpu = (int)mig->parent;
	}
	if (gpu < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = device_checks(c, (unsigned)gpu);
	if (r)
		return r;
	c->mig = mig;
	if (mig && !(flags & CALL_MIG_OK))
		return NVML_ERROR_NOT_SUPPORTED;
	return NVML_SUCCESS;
}

nvmlReturn_t fake_leave(struct fake_call *c, nvmlReturn_t r)
{
	if ((c->flags & CALL_MEMORY) && r == NVML_SUCCESS && c->index >= 0)
		g.mem_calls[c->index]++;
	if (c->locked)
		pthread_mutex_unlock(&lock);
	c->locked = false;
	return r;
}

/* Lock held, world loaded: the GPU index of a second handle argument. */
int fake_resolve(nvmlDevice_t d)
{
	int gpu, mig;

	if (!decode(d, &gpu, &mig) || mig >= 0 || (unsigned)gpu >= g.w->ngpus)
		return -1;
	return gpu;
}

/* ---- readings that move with time --------------------------------------- */

/* kill(pid, 0) says the pid exists (EPERM: it does, someone else's); a
 * zombie has already released its GPU memory, as with a real driver. */
bool fake_proc_alive(const struct fake_proc *p)
{
	char path[64], buf[256], *rp;
	ssize_t n;
	int fd;

	if (!p->follow)
		return true;
	if (p->pid == 0 || p->pid > INT32_MAX)
		return false;
	if (kill((pid_t)p->pid, 0) && errno != EPERM)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/stat", p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return !(rp && rp[1] == ' ' && rp[2] == 'Z');
}

static unsigned long long grown(unsigned long long base, double rate)
{
	if (rate == 0)
		return base; /* exact: a raw 0xFFFFFFFFFFFFFFFE survives */
	double v = (double)base + rate * fake_elapsed_s();

	return v <= 0 ? 0 : (unsigned long long)v;
}

unsigned long long fake_proc_used(const struct fake_proc *p)
{
	if (p->used_na)
		return NVML_VALUE_NOT_AVAILABLE;
	if (p->step && p->rate > 0) { /* a caching allocator's segments */
		double grew = p->rate * fake_elapsed_s();
		return p->used + (unsigned long long)(grew / (double)p->step) * p->step;
	}
	return grown(p->used, p->rate);
}

/* Sum of the known usage of live processes on gpu (and GPU instance gi,
 * unless FAKE_NO_INSTANCE). */
static unsigned long long procs_used(const struct fake_world *w, unsigned gpu,
				     unsigned gi)
{
	unsigned long long sum = 0;

	for (unsigned i = 0; i < w->nprocs; i++) {
		const struct fake_proc *p = &w->procs[i];

		if (p->gpu != gpu || p->used_na || !fake_proc_alive(p))
			continue;
		if (gi != FAKE_NO_INSTANCE && p->gi != gi)
			continue;
		sum += fake_proc_used(p);
	}
	return sum;
}

static void fill_memory(nvmlMemory_v2_t *m, unsigned long long total,
			unsigned long long reserved, unsigned long long used, bool raw)
{
	unsigned long long cap = total > reserved ? total - reserved : 0;

	m->version = nvmlMemory_v2;
	m->total = total;
	m->reserved = reserved;
	m->used = used < cap || raw ? used : cap;
	m->free = cap - m->used; /* raw: wraps past 0, as a confused driver's */
}

void fake_gpu_memory(const struct fake_world *w, unsigned index,
		     nvmlMemory_v2_t *m)
{
	const struct fake_gpu *gp = &w->gpus[index];
	unsigned long long used;

	if (gp->mem_used_auto)
		used = procs_used(w, index, FAKE_NO_INSTANCE) +
		       grown(gp->v[GF_MEM_ORPHAN], gp->mem_rate);
	else
		used = grown(gp->v[GF_MEM_USED], gp->mem_rate);
	fill_memory(m, gp->v[GF_MEM_TOTAL], gp->v[GF_MEM_RESERVED], used,
		    gp->has[GF_MEM_RAW] && gp->v[GF_MEM_RAW]);
	/* a driver whose free is not total - reserved - used to the byte: the
	 * H100 of docs (81559 = 480 + 14513 + 66567 MiB, each rounded down) */
	if (gp->has[GF_MEM_FREE])
		m->free = gp->v[GF_MEM_FREE];
}

void fake_mig_memory(const struct fake_world *w, const struct fake_mig *mig,
		     nvmlMemory_v2_t *m)
{
	unsigned long long used = mig->mem_used_auto ?
		procs_used(w, mig->parent, mig->gi) : mig->mem_used;

	fill_memory(m, mig->mem_total, mig->mem_reserved, used, false);
}
