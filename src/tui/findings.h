/* findings.h - the findings panel's input: what is wrong, how badly, and
 * which GPU or process it names (so the tables can highlight it).
 *
 * The panel only needs this small struct.  Until the diagnosis engine
 * (include/vramz/diagnose.h, branch diag) is on main, findings.c derives
 * a few findings from the model itself; wiring the engine in means
 * replacing findings_update's body with a call to it and a translation of
 * its findings into these structs, nothing else in the TUI changes. */
#ifndef VRAMZ_TUI_FINDINGS_H
#define VRAMZ_TUI_FINDINGS_H

#include <stdint.h>

#include "tui/model.h"

enum { SEV_INFO = 1, SEV_WARN = 2, SEV_CRIT = 3 };

struct finding {
	int severity;                 /* SEV_* */
	const char *kind;             /* "leak", "idle", "orphaned" */
	int gpu;                      /* backend index it names, -1 none */
	uint32_t pid;                 /* process it names, 0 none */
	/* figures, apart from the words */
	double rate_bytes_per_s;      /* leak */
	int64_t time_to_full_ms;      /* leak, -1 unknown */
	int64_t idle_ms;              /* idle */
	uint64_t bytes;               /* what it holds / what is unowned */
};

#define FINDINGS_MAX 32
struct findings {
	struct finding v[FINDINGS_MAX];
	unsigned n;
};

struct findings_opts {
	int64_t idle_after_ms;        /* an idle holder after this long */
	uint64_t min_bytes;           /* ignore holders / orphans below */
};

/* Recomputes f from m and marks the named GPUs and rows in m. */
void findings_update(struct findings *f, struct model *m, const struct findings_opts *o);
/* One line for the panel. */
void findings_text(const struct finding *x, char *buf, size_t len);

#endif
