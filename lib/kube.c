/* SPDX-License-Identifier: Apache-2.0 */
/* kube.c - Kubernetes names of a GPU process's pod and container, read
 * from the kubelet's log directories (see kube.h for the layout and the
 * refresh rule).
 *
 * The cgroup gives a pod uid and a container id, which nobody can act on;
 * the API server would give names, but asking it needs credentials, a
 * network and a client library in a tool that must stay small and run on
 * the node.  The kubelet already writes every name beside every id, in
 * file names under /var/log: this module reads those names, and only
 * those, into two sorted arrays looked up by binary search, so a tick of
 * hundreds of GPU processes costs a few string compares each.
 */
#include "kube.h"
#include "text.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

_Static_assert(KUBE_POD_MAX + 1 == VRAMZ_POD_LEN, "a pod name fills vramz_proc_sample.pod");
_Static_assert(KUBE_NS_MAX + 1 == VRAMZ_KUBE_NAME_LEN &&
	       KUBE_CONTAINER_MAX + 1 == VRAMZ_KUBE_NAME_LEN, "names fill their members");

/* Bounds on what one scan keeps: far above a node's pods (the kubelet's
 * default max is 110) and containers, so memory stays bounded (~5 MiB)
 * whatever a directory holds. */
#define KUBE_MAX_PODS 4096u
#define KUBE_MAX_CONTAINERS 8192u
/* An unknown id looks at the directories at most this often. */
#define KUBE_LOOK_NS 1000000000LL

struct kube_pod {
	char uid[40];
	char ns[KUBE_NS_MAX + 1];
	char name[KUBE_POD_MAX + 1];
};

struct kube_ctr {
	char id[65];
	char name[KUBE_CONTAINER_MAX + 1];
	/* the pod its link names: the container is named only for a process
	 * of that pod, so ids that disagree with the cgroup name nothing */
	char ns[KUBE_NS_MAX + 1];
	char pod[KUBE_POD_MAX + 1];
};

/* What a directory looked like when it was read: a change of either
 * (an entry added, removed or renamed) means reading it again. */
struct kube_dirstamp {
	int present;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
};

struct kube_names {
	char *root;
	struct kube_pod *pods;
	unsigned npods, pods_cap;
	struct kube_ctr *ctrs;
	unsigned nctrs, ctrs_cap;
	struct kube_dirstamp stamp[2]; /* pods/, containers/ as last read */
	int scanned;                   /* read at least once */
	int64_t looked_ns;             /* last look at the stamps */
	unsigned scans;
};

const char *kube_log_root(void)
{
	const char *r = getenv("VRAMZ_KUBE_LOG_ROOT");
	return r && *r ? r : "/var/log";
}

struct kube_names *kube_names_new(const char *root)
{
	struct kube_names *k = calloc(1, sizeof *k);

	if (!k)
		return NULL;
	k->root = strdup(root ? root : kube_log_root());
	if (!k->root) {
		free(k);
		return NULL;
	}
	return k;
}

void kube_names_free(struct kube_names *k)
{
	if (!k)
		return;
	free(k->pods);
	free(k->ctrs);
	free(k->root);
	free(k);
}

unsigned kube_names_scans(const struct kube_names *k)
{
	return k ? k->scans : 0;
}

/* ---- parsing one name ------------------------------------------------------ */

static int kube_hex(const char *s, size_t n)
{
	while (n--)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return 0;
	return 1;
}

/* A pod uid as the cgroup parser gives it (lib/proc.c): a 36-character
 * UUID, or 32 hex digits for a static pod's config hash. */
static int kube_uid_ok(const char *s, size_t n)
{
	if (n == 32)
		return kube_hex(s, 32);
	if (n != 36)
		return 0;
	for (size_t i = 0; i < 36; i++)
		if (i == 8 || i == 13 || i == 18 || i == 23 ? s[i] != '-' : !kube_hex(s + i, 1))
			return 0;
	return 1;
}

/* Splits s[0..n) at '_' into exactly three non-empty parts of at most
 * max[i] bytes, each copied (NUL-terminated) into out[i] and sanitized. */
static int kube_split3(const char *s, size_t n, char *const out[3], const size_t max[3])
{
	const char *part = s, *end = s + n;

	for (int i = 0; i < 3; i++) {
		const char *us = i < 2 ? memchr(part, '_', (size_t)(end - part)) : end;
		if (!us)
			return -1;
		size_t len = (size_t)(us - part);
		if (len == 0 || len > max[i] || memchr(part, '\0', len))
			return -1;
		memcpy(out[i], part, len);
		out[i][len] = '\0';
		part = us + 1;
	}
	if (memchr(out[2], '_', strlen(out[2])))
		return -1; /* a fourth part */
	for (int i = 0; i < 3; i++)
		text_sanitize(out[i]);
	return 0;
}

int kube_parse_pod_dir(const char *name, char ns[KUBE_NS_MAX + 1],
		       char pod[KUBE_POD_MAX + 1], char uid[40])
{
	char *out[3] = {ns, pod, uid};
	const size_t max[3] = {KUBE_NS_MAX, KUBE_POD_MAX, 36};

	if (kube_split3(name, strlen(name), out, max) ||
	    !kube_uid_ok(uid, strlen(uid)))
		return -1;
	return 0;
}

int kube_parse_container_log(const char *name, char pod[KUBE_POD_MAX + 1],
			     char ns[KUBE_NS_MAX + 1], char container[KUBE_CONTAINER_MAX + 1],
			     char id[65])
{
	char *out[3] = {pod, ns, container};
	const size_t max[3] = {KUBE_POD_MAX, KUBE_NS_MAX, KUBE_CONTAINER_MAX};
	size_t n = strlen(name);

	/* "<pod>_<ns>_<container>-<64 hex>.log": the id has a fixed length,
	 * so a container name holding '-' splits right */
	if (n < 4 + 65 + 5 || strcmp(name + n - 4, ".log"))
		return -1;
	n -= 4;
	if (name[n - 65] != '-' || !kube_hex(name + n - 64, 64))
		return -1;
	if (kube_split3(name, n - 65, out, max))
		return -1;
	memcpy(id, name + n - 64, 64);
	id[64] = '\0';
	return 0;
}

/* ---- reading the directories --------------------------------------------- */

static void kube_stamp(const char *path, struct kube_dirstamp *s)
{
	struct stat sb;

	memset(s, 0, sizeof *s);
	if (stat(path, &sb) || !S_ISDIR(sb.st_mode))
		return;
	s->present = 1;
	s->dev = sb.st_dev;
	s->ino = sb.st_ino;
	s->mtime = sb.st_mtim;
}

static int kube_stamp_eq(const struct kube_dirstamp *a, const struct kube_dirstamp *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

static int kube_pod_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kube_pod *)a)->uid, ((const struct kube_pod *)b)->uid);
}

static int kube_ctr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kube_ctr *)a)->id, ((const struct kube_ctr *)b)->id);
}

/* A slot at the end of an array (grown by doubling up to max), or NULL. */
static void *kube_slot(void **v, unsigned *n, unsigned *cap, unsigned max, size_t elem)
{
	if (*n >= max)
		return NULL;
	if (*n == *cap) {
		unsigned ncap = *cap ? *cap * 2 : 64;
		void *nv = realloc(*v, (size_t)(ncap < max ? ncap : max) * elem);
		if (!nv)
			return NULL;
		*v = nv;
		*cap = ncap < max ? ncap : max;
	}
	return (char *)*v + (size_t)(*n) * elem;
}

static void kube_read_pods(struct kube_names *k, const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	k->npods = 0;
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		struct kube_pod *p = kube_slot((void **)&k->pods, &k->npods, &k->pods_cap,
					       KUBE_MAX_PODS, sizeof *p);
		if (!p)
			break;
		if (de->d_name[0] != '.' && !kube_parse_pod_dir(de->d_name, p->ns, p->name, p->uid))
			k->npods++;
	}
	closedir(d);
	qsort(k->pods, k->npods, sizeof *k->pods, kube_pod_cmp);
}

static void kube_read_containers(struct kube_names *k, const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	k->nctrs = 0;
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		struct kube_ctr *c = kube_slot((void **)&k->ctrs, &k->nctrs, &k->ctrs_cap,
					       KUBE_MAX_CONTAINERS, sizeof *c);
		if (!c)
			break;
		if (!kube_parse_container_log(de->d_name, c->pod, c->ns, c->name, c->id))
			k->nctrs++;
	}
	closedir(d);
	qsort(k->ctrs, k->nctrs, sizeof *k->ctrs, kube_ctr_cmp);
}

/* Reads both directories again when either changed since the last read
 * (or was never read); looks at most once per KUBE_LOOK_NS. */
static void kube_refresh(struct kube_names *k, int64_t now_ns)
{
	char path[2][4096];
	struct kube_dirstamp now[2];

	if (k->scanned && now_ns - k->looked_ns < KUBE_LOOK_NS)
		return;
	k->looked_ns = now_ns;
	if ((size_t)snprintf(path[0], sizeof path[0], "%s/pods", k->root) >= sizeof path[0] ||
	    (size_t)snprintf(path[1], sizeof path[1], "%s/containers", k->root) >= sizeof path[1])
		return;
	kube_stamp(path[0], &now[0]);
	kube_stamp(path[1], &now[1]);
	if (k->scanned && kube_stamp_eq(&now[0], &k->stamp[0]) &&
	    kube_stamp_eq(&now[1], &k->stamp[1]))
		return;
	/* stamped before reading: an entry added during the read changes the
	 * time again and is read next time */
	k->stamp[0] = now[0];
	k->stamp[1] = now[1];
	kube_read_pods(k, path[0]);
	kube_read_containers(k, path[1]);
	k->scanned = 1;
	k->scans++;
}

static const struct kube_pod *kube_find_pod(const struct kube_names *k, const char *uid)
{
	struct kube_pod key;

	if (!k->npods || strlen(uid) >= sizeof key.uid)
		return NULL;
	strcpy(key.uid, uid);
	return bsearch(&key, k->pods, k->npods, sizeof *k->pods, kube_pod_cmp);
}

static const struct kube_ctr *kube_find_ctr(const struct kube_names *k, const char *id)
{
	struct kube_ctr key;

	if (!k->nctrs || strlen(id) >= sizeof key.id)
		return NULL;
	strcpy(key.id, id);
	return bsearch(&key, k->ctrs, k->nctrs, sizeof *k->ctrs, kube_ctr_cmp);
}

void kube_names_fill(struct kube_names *k, int64_t now_ns, vramz_proc_sample *p)
{
	const struct kube_pod *pod = NULL;
	const struct kube_ctr *ctr = NULL;

	p->pod[0] = p->pod_namespace[0] = p->container_name[0] = '\0';
	if (!k || !p->pod_uid[0])
		return; /* not a pod: nothing to name, nothing to read */
	for (int pass = 0; pass < 2; pass++) {
		pod = kube_find_pod(k, p->pod_uid);
		ctr = p->container[0] ? kube_find_ctr(k, p->container) : NULL;
		if (ctr && !(pod && !strcmp(ctr->pod, pod->name) && !strcmp(ctr->ns, pod->ns)))
			ctr = NULL; /* its link names another pod, or the pod is unnamed */
		if (pass || (pod && (ctr || !p->container[0])))
			break;
		kube_refresh(k, now_ns);
	}
	if (pod) {
		snprintf(p->pod, sizeof p->pod, "%s", pod->name);
		snprintf(p->pod_namespace, sizeof p->pod_namespace, "%s", pod->ns);
	}
	if (ctr)
		snprintf(p->container_name, sizeof p->container_name, "%s", ctr->name);
}
