/* SPDX-License-Identifier: Apache-2.0 */
/* words.c - the small formatters every finding's sentence is made of: an
 * amount of memory, a duration, who the finding is about.  Apart from the
 * kinds' words (advice.c, torch.c) so that those, the idle rule's reasons
 * (idle.c) and the summary dispatch (kinds.c) share them without
 * depending on one another.
 */
#include "words.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *diag_bytes_str(char *b, size_t n, double v)
{
	static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int i = 0;
	while (fabs(v) >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(b, n, i <= 2 ? "%.0f %s" : "%.1f %s", v, u[i]);
	return b;
}

const char *diag_dur_str(char *b, size_t n, double ms)
{
	double s = ms / 1000;
	if (s < 90)
		snprintf(b, n, "%.0fs", s);
	else if (s < 5400)
		snprintf(b, n, "%.0fm", s / 60);
	else if (s < 172800)
		snprintf(b, n, "%.0fh%02.0fm", floor(s / 3600), fmod(floor(s / 60), 60));
	else
		snprintf(b, n, "%.0fd%02.0fh", floor(s / 86400), fmod(floor(s / 3600), 24));
	return b;
}

const char *diag_subject_str(const vramz_finding *f, char *b, size_t n)
{
	/* a pod the kubelet's logs name (jobkey.c): "pod NAMESPACE/NAME" */
	const char *pod = !strncmp(f->job, "pod:", 4) && strchr(f->job, '/') ? f->job + 4 : NULL;
	if (f->pid) {
		int k = snprintf(b, n, "pid %u", (unsigned)f->pid);
		if (f->comm[0] && k > 0 && (size_t)k < n)
			k += snprintf(b + k, n - (size_t)k, " (%s)", f->comm);
		if (pod && k > 0 && (size_t)k < n)
			k += snprintf(b + k, n - (size_t)k, " in pod %s", pod);
		if (pod && f->container_name[0] && k > 0 && (size_t)k < n)
			k += snprintf(b + k, n - (size_t)k, " (container %s)", f->container_name);
		if (f->gpu >= 0 && k > 0 && (size_t)k < n)
			snprintf(b + k, n - (size_t)k, " on GPU %d", f->gpu);
	} else if (pod) {
		snprintf(b, n, "pod %s", pod);
	} else if (f->job[0]) {
		snprintf(b, n, "job %s", f->job);
	} else if (f->gpu >= 0) {
		snprintf(b, n, "GPU %d", f->gpu);
	} else {
		snprintf(b, n, "the machine");
	}
	return b;
}

/* the parts in the order of enum outside_part_word */
static void parts_of(const vramz_finding *f, uint64_t v[5])
{
	v[OUTSIDE_NONE] = 0;
	v[OUTSIDE_CONTEXT] = f->outside_context_bytes;
	v[OUTSIDE_LIBRARIES] = f->outside_libraries_bytes;
	v[OUTSIDE_NCCL] = f->outside_nccl_bytes;
	v[OUTSIDE_OTHER] = f->outside_other_bytes;
}

enum outside_part_word outside_largest(const vramz_finding *f)
{
	uint64_t v[5];
	enum outside_part_word best = OUTSIDE_NONE;
	if (!(f->figures & VRAMZ_FG_PARTS))
		return OUTSIDE_NONE;
	parts_of(f, v);
	for (int i = OUTSIDE_CONTEXT; i <= OUTSIDE_OTHER; i++)
		if (v[i] > v[best])
			best = (enum outside_part_word)i;
	return best;
}

int outside_parts_words(const vramz_finding *f, char *b, size_t n)
{
	uint64_t v[5];
	int done[5] = {1, 0, 0, 0, 0};
	size_t at = 0;
	b[0] = 0;
	if (!(f->figures & VRAMZ_FG_PARTS))
		return 0;
	parts_of(f, v);
	for (int k = 0; k < 4; k++) {
		int best = 0;
		for (int i = OUTSIDE_CONTEXT; i <= OUTSIDE_OTHER; i++)
			if (!done[i] && (!best || v[i] > v[best]))
				best = i;
		done[best] = 1;
		if (!v[best] || at >= n)
			continue;
		char x[32];
		diag_bytes_str(x, sizeof x, (double)v[best]);
		int w;
		if (best == OUTSIDE_NCCL)
			w = snprintf(b + at, n - at, "%s%s in %u NCCL communicator%s", at ? ", " : "", x,
				     f->nccl_comms, f->nccl_comms == 1 ? "" : "s");
		else
			w = snprintf(b + at, n - at, "%s%s %s", at ? ", " : "", x,
				     best == OUTSIDE_CONTEXT ? "CUDA context"
				     : best == OUTSIDE_LIBRARIES ? "CUDA libraries" : "other");
		if (w > 0)
			at += (size_t)w;
	}
	return 1;
}
