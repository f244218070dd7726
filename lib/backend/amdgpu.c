/* SPDX-License-Identifier: Apache-2.0 */
/* amdgpu.c - the AMD backend: the kernel's amdgpu sysfs files and the DRM
 * core's per-client fdinfo, no AMD library needed to build or run.
 *
 * GPUs are the /sys/class/drm/cardN devices whose uevent says
 * DRIVER=amdgpu (connector entries such as card0-DP-1 are not devices).
 * Identity comes from uevent (PCI slot and ids), product_name when the
 * board's FRU has one, else the model table by device id
 * (amdgpu_parse.c), unique_id, serial_number and vbios_version.  A sample
 * reads mem_info_vram_*, gpu_busy_percent / mem_busy_percent, the hwmon
 * temperatures by label (the GPU's temperature is "edge" where the card
 * has it, else "junction": an MI300X has no edge sensor), power against
 * its cap, the starred pp_dpm_* clocks and the PCIe link.  Processes come
 * from /proc/PID/fdinfo: each open DRM file of amdgpu names its device
 * (drm-pdev), its client (drm-client-id, shared by dup'ed fds, so counted
 * once) and the VRAM and engine time it holds; the engine share is the
 * busy time between two scans over the wall time between them.
 *
 * VRAMZ_SYSFS_ROOT and VRAMZ_PROCFS_ROOT move both trees (a DaemonSet that
 * mounts the host's /sys and /proc elsewhere; the tests' fixture trees).
 * A file that is missing or unreadable, or holds garbage, leaves its
 * field unknown; a process that vanishes mid-scan is skipped.
 */
#include "backend.h"
#include "amdgpu_parse.h"
#include "clock.h"
#include "grow.h"
#include "proc.h"
#include "text.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AMD_MAX_GPUS 64
#define AMD_MAX_FDS_PER_PID 4096 /* a process with more is read in part */

struct amd_gpu {
	char dev[PATH_MAX];         /* .../class/drm/cardN/device */
	char hwmon[PATH_MAX];       /* its hwmon/hwmonM, "" when none */
	char slot[32];              /* "0000:03:00.0" */
	unsigned device_id;
	int numa_node;              /* -1 unknown */
	int served;                 /* procs() asked since the last scan */
};

/* One amdgpu client of one process, as the last scan saw it. */
struct amd_client {
	uint32_t pid;
	unsigned gpu;
	uint64_t client_id;
	uint64_t vram_bytes;
	int have_vram;
	uint64_t busy_ns;           /* gfx + compute engine time */
	int have_engine;
	int64_t seen_ns;            /* CLOCK_MONOTONIC of the scan */
};

struct backend {
	char proc_root[PATH_MAX];
	unsigned n;
	struct amd_gpu g[AMD_MAX_GPUS];
	struct amd_client *cl, *prev;
	unsigned ncl, capcl, nprev, capprev;
	int scanned;                /* a scan has run */
};

/* ---- small file reads ----------------------------------------------------- */

/* dir/name into buf (NUL-terminated, at most cap-1 bytes); -1 when it
 * cannot be read or is empty. */
static int read_text(const char *dir, const char *name, char *buf, size_t cap)
{
	char path[PATH_MAX + 64];
	int fd;
	ssize_t n;
	size_t have = 0;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return -1;
	while (have < cap - 1 && ((n = read(fd, buf + have, cap - 1 - have)) > 0 ||
				  (n < 0 && errno == EINTR)))
		have += n > 0 ? (size_t)n : 0;
	close(fd);
	buf[have] = '\0';
	return have ? 0 : -1;
}

static int read_u64(const char *dir, const char *name, uint64_t *v)
{
	char buf[64];
	return read_text(dir, name, buf, sizeof buf) ? -1 : amd_parse_u64(buf, v);
}

/* One line of text, control bytes made safe, trailing white space cut. */
static int read_line(const char *dir, const char *name, char *out, size_t cap)
{
	char buf[256];
	if (read_text(dir, name, buf, sizeof buf))
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	size_t n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	if (!n)
		return -1;
	text_sanitize(buf);
	snprintf(out, cap, "%s", buf);
	return 0;
}

static const char *env_root(const char *var, const char *dflt)
{
	const char *v = getenv(var);
	return v && *v ? v : dflt;
}

/* ---- discovery ------------------------------------------------------------ */

static int card_name(const char *s)
{
	if (strncmp(s, "card", 4) || !s[4])
		return 0;
	for (s += 4; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static int cmp_slot(const void *a, const void *b)
{
	return strcmp(((const struct amd_gpu *)a)->slot, ((const struct amd_gpu *)b)->slot);
}

static void find_hwmon(struct amd_gpu *g)
{
	char dir[PATH_MAX + 16];
	DIR *d;
	struct dirent *e;

	g->hwmon[0] = '\0';
	snprintf(dir, sizeof dir, "%s/hwmon", g->dev);
	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "hwmon", 5) && !g->hwmon[0] &&
		    (size_t)snprintf(g->hwmon, sizeof g->hwmon, "%s/%s", dir, e->d_name) >= sizeof g->hwmon)
			g->hwmon[0] = '\0';
	closedir(d);
}

static int amd_open(struct backend **out, const vramz_open_opts *opts, char *err, size_t errlen)
{
	char drm[PATH_MAX], text[1024];
	struct backend *b = calloc(1, sizeof *b);
	DIR *d;
	struct dirent *e;

	(void)opts;
	*out = b;
	if (!b)
		return VRAMZ_ENOMEM;
	snprintf(b->proc_root, sizeof b->proc_root, "%s", env_root("VRAMZ_PROCFS_ROOT", "/proc"));
	snprintf(drm, sizeof drm, "%s/class/drm", env_root("VRAMZ_SYSFS_ROOT", "/sys"));
	if (!(d = opendir(drm))) {
		snprintf(err, errlen, "amdgpu: %s: %s", drm, strerror(errno));
		return VRAMZ_ENODEV;
	}
	while ((e = readdir(d)) && b->n < AMD_MAX_GPUS) {
		struct amd_gpu *g = &b->g[b->n];
		struct amd_uevent ue;
		uint64_t numa;
		if (!card_name(e->d_name) ||
		    (size_t)snprintf(g->dev, sizeof g->dev, "%s/%s/device", drm, e->d_name) >= sizeof g->dev ||
		    read_text(g->dev, "uevent", text, sizeof text) || amd_parse_uevent(text, &ue) ||
		    strcmp(ue.driver, "amdgpu"))
			continue;
		/* two card nodes of one device (rare): one GPU */
		int dup = 0;
		for (unsigned i = 0; i < b->n; i++)
			dup |= !strcmp(b->g[i].slot, ue.slot);
		if (dup)
			continue;
		snprintf(g->slot, sizeof g->slot, "%s", ue.slot);
		g->device_id = ue.device_id;
		/* numa_node reads -1 on a machine of one node */
		g->numa_node = !read_u64(g->dev, "numa_node", &numa) && numa < 4096 ? (int)numa : -1;
		find_hwmon(g);
		b->n++;
	}
	closedir(d);
	if (!b->n) {
		snprintf(err, errlen, "amdgpu: no AMD GPU in %s", drm);
		return VRAMZ_ENODEV;
	}
	/* readdir order is no order: PCI order, as the driver numbers them */
	qsort(b->g, b->n, sizeof b->g[0], cmp_slot);
	return 0;
}

static void amd_close(struct backend *b)
{
	if (!b)
		return;
	free(b->cl);
	free(b->prev);
	free(b);
}

static int amd_system(struct backend *b, vramz_system_info *sys, vramz_backend_info *bi)
{
	char root[PATH_MAX + 16];
	(void)sys;
	/* an out-of-tree (DKMS) amdgpu has a version; the in-tree one has
	 * none, and the kernel's release says which driver it is */
	snprintf(root, sizeof root, "%s/module/amdgpu", env_root("VRAMZ_SYSFS_ROOT", "/sys"));
	if (!read_line(root, "version", bi->driver_version, sizeof bi->driver_version))
		return 0;
	snprintf(root, sizeof root, "%s/sys/kernel", b->proc_root);
	if (read_line(root, "osrelease", bi->driver_version, sizeof bi->driver_version))
		bi->driver_version[0] = '\0';
	return 0;
}

static unsigned amd_count(struct backend *b)
{
	return b->n;
}

/* ---- static facts ----------------------------------------------------------- */

static int amd_gpu_info(struct backend *b, unsigned idx, vramz_gpu_info *o)
{
	const struct amd_gpu *g = &b->g[idx];
	const struct amd_model *m = amd_model_for(g->device_id);
	char uid[64];
	uint64_t v;

	if (read_line(g->dev, "product_name", o->name, sizeof o->name))
		snprintf(o->name, sizeof o->name, "%s", m ? m->name : "AMD GPU");
	if (!read_line(g->dev, "unique_id", uid, sizeof uid))
		snprintf(o->uuid, sizeof o->uuid, "AMD-%s", uid);
	snprintf(o->pci_bus_id, sizeof o->pci_bus_id, "%s", g->slot);
	read_line(g->dev, "serial_number", o->serial, sizeof o->serial);
	read_line(g->dev, "vbios_version", o->vbios, sizeof o->vbios);
	if (m) {
		snprintf(o->arch, sizeof o->arch, "%s", m->arch);
		snprintf(o->mem_type, sizeof o->mem_type, "%s", m->mem_type);
		o->mem_bus_width_bits = m->bus_width_bits;
		o->valid |= VRAMZ_I_ARCH | VRAMZ_I_BUS_WIDTH;
	}
	if (!read_u64(g->dev, "mem_info_vram_total", &v) && v) {
		o->mem_total_bytes = v;
		o->valid |= VRAMZ_I_MEM_TOTAL;
	}
	return 0;
}

static int amd_gpu_details(struct backend *b, unsigned idx, vramz_gpu_info *o)
{
	const struct amd_gpu *g = &b->g[idx];
	char text[1024];
	unsigned gen, mhz;
	uint64_t w, cap;

	if (!read_text(g->dev, "max_link_speed", text, sizeof text) && !amd_parse_link_gen(text, &gen) &&
	    !read_u64(g->dev, "max_link_width", &w) && w && w <= 32) {
		o->pcie_max_gen = gen;
		o->pcie_max_width = (unsigned)w;
		o->valid |= VRAMZ_I_PCIE_MAX;
	}
	if (!read_text(g->dev, "pp_dpm_mclk", text, sizeof text) && !amd_parse_dpm_max(text, &mhz)) {
		o->max_mem_clock_mhz = mhz;
		o->valid |= VRAMZ_I_MAX_MEMCLK;
	}
	if (!read_text(g->dev, "pp_dpm_sclk", text, sizeof text) && !amd_parse_dpm_max(text, &mhz)) {
		o->max_sm_clock_mhz = mhz;
		o->valid |= VRAMZ_I_MAX_SMCLK;
	}
	uint64_t lo, hi;
	/* one validity bit covers the three: all read, or none shown */
	if (g->hwmon[0] && !read_u64(g->hwmon, "power1_cap_default", &cap) && cap &&
	    !read_u64(g->hwmon, "power1_cap_min", &lo) && !read_u64(g->hwmon, "power1_cap_max", &hi) &&
	    lo <= cap && cap <= hi && hi < 100000000000ull) {
		o->power_default_limit_mw = (unsigned)(cap / 1000);
		o->power_min_limit_mw = (unsigned)(lo / 1000);
		o->power_max_limit_mw = (unsigned)(hi / 1000);
		o->valid |= VRAMZ_I_POWER_LIMITS;
	}
	return 0;
}

/* ---- one sample ---------------------------------------------------------- */

/* hwmon temperature whose tempN_label is label, in whole degrees C. */
static int hwmon_temp(const struct amd_gpu *g, const char *label, int *c)
{
	char name[32], text[64];
	uint64_t milli;

	for (int i = 1; i <= 8 && g->hwmon[0]; i++) {
		snprintf(name, sizeof name, "temp%d_label", i);
		if (read_line(g->hwmon, name, text, sizeof text) || strcmp(text, label))
			continue;
		snprintf(name, sizeof name, "temp%d_input", i);
		/* an unreadable sensor reads garbage or errors: unknown */
		if (read_u64(g->hwmon, name, &milli) || milli > 200000)
			return -1;
		*c = (int)((milli + 500) / 1000);
		return 0;
	}
	return -1;
}

static int amd_sample(struct backend *b, unsigned idx, unsigned flags, vramz_gpu_sample *o)
{
	const struct amd_gpu *g = &b->g[idx];
	char text[1024];
	uint64_t total, used, busy, mbusy, uw, w;
	unsigned mhz, gen;

	if (flags & VRAMZ_SAMPLE_SLOW_ONLY)
		return 0;
	if (access(g->dev, F_OK))
		return VRAMZ_ELOST; /* the device went away (unbound, hot-removed) */
	if (!read_u64(g->dev, "mem_info_vram_total", &total) && total &&
	    !read_u64(g->dev, "mem_info_vram_used", &used) && used <= total) {
		o->mem_total_bytes = total;
		o->mem_used_bytes = used;
		o->mem_free_bytes = total - used;
		o->valid |= VRAMZ_F_MEM;
	}
	/* both or neither: one validity bit covers the pair */
	if (!read_u64(g->dev, "gpu_busy_percent", &busy) && busy <= 100 &&
	    !read_u64(g->dev, "mem_busy_percent", &mbusy) && mbusy <= 100) {
		o->util_gpu_pct = (unsigned)busy;
		o->util_mem_pct = (unsigned)mbusy;
		o->valid |= VRAMZ_F_UTIL;
	}
	if (!hwmon_temp(g, "edge", &o->temp_c) || !hwmon_temp(g, "junction", &o->temp_c))
		o->valid |= VRAMZ_F_TEMP;
	if (!hwmon_temp(g, "mem", &o->temp_mem_c))
		o->valid |= VRAMZ_F_TEMP_MEM;
	if (g->hwmon[0] && (!read_u64(g->hwmon, "power1_average", &uw) ||
			    !read_u64(g->hwmon, "power1_input", &uw)) && uw < 100000000000ull) {
		o->power_mw = (unsigned)(uw / 1000);
		o->valid |= VRAMZ_F_POWER;
	}
	if (g->hwmon[0] && !read_u64(g->hwmon, "power1_cap", &uw) && uw && uw < 100000000000ull) {
		o->power_limit_mw = (unsigned)(uw / 1000);
		o->valid |= VRAMZ_F_POWER_LIMIT;
	}
	if (!read_text(g->dev, "pp_dpm_sclk", text, sizeof text) && !amd_parse_dpm_current(text, &mhz)) {
		o->clock_sm_mhz = mhz;
		o->valid |= VRAMZ_F_CLK_SM;
	}
	if (!read_text(g->dev, "pp_dpm_mclk", text, sizeof text) && !amd_parse_dpm_current(text, &mhz)) {
		o->clock_mem_mhz = mhz;
		o->valid |= VRAMZ_F_CLK_MEM;
	}
	if ((flags & VRAMZ_SAMPLE_LINK) &&
	    !read_text(g->dev, "current_link_speed", text, sizeof text) && !amd_parse_link_gen(text, &gen) &&
	    !read_u64(g->dev, "current_link_width", &w) && w && w <= 32) {
		o->pcie_gen = gen;
		o->pcie_width = (unsigned)w;
		o->valid |= VRAMZ_F_PCIE_LINK;
	}
	return 0;
}

/* ---- processes: DRM fdinfo -------------------------------------------------- */

static int gpu_of_pdev(const struct backend *b, const char *pdev)
{
	for (unsigned i = 0; i < b->n; i++)
		if (!strcmp(b->g[i].slot, pdev))
			return (int)i;
	return -1;
}

/* Adds the client an fdinfo describes, once per (pid, gpu, client id). */
static int add_client(struct backend *b, uint32_t pid, const struct amd_fdinfo *fi, int64_t now)
{
	int gpu = gpu_of_pdev(b, fi->pdev);

	if (gpu < 0)
		return 0;
	for (unsigned i = b->ncl; i-- > 0 && b->cl[i].pid == pid;)
		if (b->cl[i].gpu == (unsigned)gpu && b->cl[i].client_id == fi->client_id)
			return 0; /* a dup'ed fd of a client already counted */
	if (b->ncl == b->capcl) {
		struct amd_client *nv = grow_array(b->cl, &b->capcl, 64, sizeof *nv);
		if (!nv)
			return VRAMZ_ENOMEM;
		b->cl = nv;
	}
	b->cl[b->ncl++] = (struct amd_client){
		.pid = pid, .gpu = (unsigned)gpu, .client_id = fi->client_id,
		.vram_bytes = fi->vram_bytes, .have_vram = fi->have_vram,
		.busy_ns = fi->gfx_ns + fi->compute_ns, .have_engine = fi->have_engine,
		.seen_ns = now,
	};
	return 0;
}

static int scan_pid(struct backend *b, uint32_t pid, int64_t now)
{
	char dir[PATH_MAX + 32], link[64], text[4096], name[300];
	DIR *d;
	struct dirent *e;
	unsigned seen = 0;
	int rc = 0;

	snprintf(dir, sizeof dir, "%s/%u/fd", b->proc_root, pid);
	if (!(d = opendir(dir)))
		return 0; /* gone, or not ours to read */
	int fdinfo = -1;
	snprintf(dir, sizeof dir, "%s/%u", b->proc_root, pid);
	int pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd >= 0)
		fdinfo = openat(pfd, "fdinfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (rc == 0 && fdinfo >= 0 && (e = readdir(d)) && seen++ < AMD_MAX_FDS_PER_PID) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		/* only DRM files: a readlink is cheaper than reading fdinfo */
		snprintf(name, sizeof name, "fd/%s", e->d_name);
		ssize_t n = readlinkat(pfd, name, link, sizeof link - 1);
		if (n < 9 || strncmp(link, "/dev/dri/", 9))
			continue;
		int fd = openat(fdinfo, e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, text, sizeof text - 1);
		close(fd);
		if (n <= 0)
			continue;
		text[n] = '\0';
		struct amd_fdinfo fi;
		if (!amd_parse_fdinfo(text, &fi))
			rc = add_client(b, pid, &fi, now);
	}
	if (fdinfo >= 0)
		close(fdinfo);
	if (pfd >= 0)
		close(pfd);
	closedir(d);
	return rc;
}

/* Reads every process's amdgpu clients; the previous scan is kept for the
 * engine-time deltas. */
static int scan(struct backend *b)
{
	DIR *d = opendir(b->proc_root);
	struct dirent *e;
	int64_t now = clock_mono_ns();
	int rc = 0;

	struct amd_client *t = b->prev;
	unsigned tc = b->capprev;
	b->prev = b->cl, b->nprev = b->ncl, b->capprev = b->capcl;
	b->cl = t, b->capcl = tc, b->ncl = 0;
	for (unsigned i = 0; i < b->n; i++)
		b->g[i].served = 0;
	if (!d)
		return 0;
	while (rc == 0 && (e = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(e->d_name, &end, 10);
		if (*end || !pid || pid > 0x7fffffffUL)
			continue;
		rc = scan_pid(b, (uint32_t)pid, now);
	}
	closedir(d);
	return rc;
}

static const struct amd_client *prev_of(const struct backend *b, const struct amd_client *c)
{
	for (unsigned i = 0; i < b->nprev; i++)
		if (b->prev[i].pid == c->pid && b->prev[i].gpu == c->gpu &&
		    b->prev[i].client_id == c->client_id)
			return &b->prev[i];
	return NULL;
}

static int amd_procs(struct backend *b, unsigned idx, unsigned flags, struct proc_vec *out)
{
	int rc;

	/* one scan of /proc serves every GPU of a tick: a GPU asked twice
	 * means a new tick */
	if (b->g[idx].served || !b->scanned) {
		b->scanned = 1;
		if ((rc = scan(b)))
			return rc;
	}
	b->g[idx].served = 1;
	for (unsigned i = 0; i < b->ncl; i++) {
		const struct amd_client *c = &b->cl[i];
		if (c->gpu != idx)
			continue;
		vramz_proc_sample *p = NULL;
		for (unsigned k = 0; k < out->n; k++)
			if (out->v[k].pid == c->pid && out->v[k].gpu_index == idx)
				p = &out->v[k];
		if (!p) {
			if (!(p = proc_vec_push(out)))
				return VRAMZ_ENOMEM;
			p->gpu_index = idx;
			p->pid = c->pid;
			p->type = VRAMZ_PT_COMPUTE;
			p->valid = VRAMZ_P_USED | VRAMZ_P_SM;
		}
		if (c->have_vram)
			p->used_bytes += c->vram_bytes;
		else
			p->valid &= ~(uint32_t)VRAMZ_P_USED;
		const struct amd_client *o = prev_of(b, c);
		if ((flags & VRAMZ_SAMPLE_PROC_UTIL) && c->have_engine && o && o->have_engine &&
		    c->busy_ns >= o->busy_ns && c->seen_ns > o->seen_ns) {
			uint64_t pct = (c->busy_ns - o->busy_ns) * 100 / (uint64_t)(c->seen_ns - o->seen_ns);
			p->sm_pct += (unsigned)(pct > 100 ? 100 : pct);
			if (p->sm_pct > 100)
				p->sm_pct = 100;
		} else {
			/* the share needs two scans of this client's engine time */
			p->valid &= ~(uint32_t)VRAMZ_P_SM;
			p->sm_pct = 0;
		}
	}
	return 0;
}

static int amd_migs(struct backend *b, unsigned idx, struct mig_vec *out)
{
	(void)b, (void)idx, (void)out;
	return 0;
}

/* amdgpu says nothing of xGMI links through sysfs that every card has: the
 * NUMA nodes tell NODE from SYS, else unknown. */
static int amd_topology(struct backend *b, unsigned a, unsigned c, vramz_link *out)
{
	out->nvlinks = 0;
	if (a == c)
		out->kind = VRAMZ_LINK_SELF;
	else if (b->g[a].numa_node < 0 || b->g[c].numa_node < 0)
		out->kind = VRAMZ_LINK_UNKNOWN;
	else
		out->kind = b->g[a].numa_node == b->g[c].numa_node ? VRAMZ_LINK_NODE : VRAMZ_LINK_SYS;
	return 0;
}

const struct backend_ops backend_amdgpu = {
	.name = "amdgpu",
	.vendor = "amd",
	.parallel_safe = 0,
	.open = amd_open,
	.close = amd_close,
	.system = amd_system,
	.count = amd_count,
	.gpu_info = amd_gpu_info,
	.gpu_details = amd_gpu_details,
	.sample = amd_sample,
	.procs = amd_procs,
	.migs = amd_migs,
	.topology = amd_topology,
};
