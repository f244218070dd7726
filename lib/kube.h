/* SPDX-License-Identifier: Apache-2.0 */
/* kube.h - Kubernetes names (namespace, pod, container) of the pod uid and
 * container id that /proc's cgroup gives, without the API server.
 *
 * The kubelet writes each container's log as
 *   LOGROOT/pods/<namespace>_<pod>_<pod-uid>/<container>/<restart>.log
 * and links it as
 *   LOGROOT/containers/<pod>_<namespace>_<container>-<container-id>.log
 * on every runtime.  Kubernetes names are DNS-1123 (lowercase letters,
 * digits, '-' and '.'), so '_' never occurs inside one and splitting on it
 * is exact; an entry that does not split into exactly those parts, or whose
 * parts are empty or longer than Kubernetes allows, is refused, never
 * half-read.  A container is named only for a process of the pod its
 * link names: the names never contradict the cgroup.  The names are sanitized (lib/internal/text.h) like any text
 * from outside.  No credentials, no network: a DaemonSet mounts the two
 * directories read-only (packaging/kubernetes/).
 *
 * What the directories say is cached (pod uid -> namespace/pod, container
 * id -> container name).  An id the cache lacks looks at the directories'
 * change times, at most once a second, and reads them again only when one
 * changed: a pod that started since is named on the next tick after its
 * directory appeared, and a pod whose logs are gone costs two stat calls a
 * second, not a directory scan a tick.  Not thread-safe: one per proc
 * cache.
 */
#ifndef VRAMZ_KUBE_H
#define VRAMZ_KUBE_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/vramz.h"

#define KUBE_NS_MAX 63        /* a namespace is a DNS-1123 label */
#define KUBE_POD_MAX 253      /* a pod name is a DNS-1123 subdomain */
#define KUBE_CONTAINER_MAX 63 /* a container name is a DNS-1123 label */

struct kube_names;

/* The directory holding pods/ and containers/: $VRAMZ_KUBE_LOG_ROOT when
 * set (tests; a DaemonSet that mounts the host's /var/log elsewhere), else
 * "/var/log". */
const char *kube_log_root(void);

/* root: NULL for kube_log_root().  Reads nothing until the first lookup.
 * NULL on OOM. */
struct kube_names *kube_names_new(const char *root);
void kube_names_free(struct kube_names *k);

/* Sets p->pod, p->pod_namespace and p->container_name from p->pod_uid and
 * p->container ("" each that nothing names).  now_ns: CLOCK_MONOTONIC, for
 * the once-a-second bound on looking at the directories again. */
void kube_names_fill(struct kube_names *k, int64_t now_ns, vramz_proc_sample *p);

/* How many times the directories were read (tests: the bound holds). */
unsigned kube_names_scans(const struct kube_names *k);

/* Parsers of one directory entry's name, exposed for tests.  0 and the
 * parts (sanitized), or -1 when the name does not parse. */
int kube_parse_pod_dir(const char *name, char ns[KUBE_NS_MAX + 1],
		       char pod[KUBE_POD_MAX + 1], char uid[40]);
int kube_parse_container_log(const char *name, char pod[KUBE_POD_MAX + 1],
			     char ns[KUBE_NS_MAX + 1], char container[KUBE_CONTAINER_MAX + 1],
			     char id[65]);

#endif
