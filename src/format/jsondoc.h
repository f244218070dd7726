/* SPDX-License-Identifier: Apache-2.0 */
/* jsondoc.h - the JSON shapes of vramz's objects (docs/json.md), shared by
 * every command that prints --json so one GPU looks the same everywhere. */
#ifndef VRAMZ_JSON_H
#define VRAMZ_JSON_H

#include "format/jsonw.h"
#include "vramz/vramz.h"

/* Opens the top-level object with the envelope every --json document
 * starts with: "schema" (VRAMZ_JSON_SCHEMA_VERSION), "vramz_version" and
 * "kind" (what the document is: the command's name, docs/json.md). */
void json_envelope(struct jsonw *w, const char *kind);
/* The envelope, then time and system. */
void json_begin(struct jsonw *w, const char *kind, vramz_ctx *ctx, const vramz_snapshot *snap);
/* One GPU sample object (identity + every field, null when unknown). */
void json_gpu(struct jsonw *w, vramz_ctx *ctx, const vramz_snapshot *snap,
	      const vramz_gpu_sample *g);
/* One process object. */
void json_proc(struct jsonw *w, vramz_ctx *ctx, const vramz_proc_sample *p);
/* "ended": the processes whose PyTorch agent left a tombstone (how each
 * ended, its last OOM's line; docs/python.md); none from a recorded log */
void json_ended(struct jsonw *w, vramz_ctx *ctx, const vramz_snapshot *snap);
/* The process's "outside_allocator_bytes" and "torch" object (null
 * without a PyTorch agent), from the table in lib/agent.c. */
void json_proc_torch(struct jsonw *w, const vramz_proc_sample *p);
/* The whole snapshot: begin, "gpus": [...], "processes": [...], end;
 * pretty 0 writes it on one line (JSON lines). */
void json_snapshot(FILE *f, const char *kind, vramz_ctx *ctx, const vramz_snapshot *snap,
		   int with_procs, int pretty);
/* The keys a lighter document keeps (NULL-terminated lists; "index" and
 * "lost" of a GPU always): the live page's stream (src/serve/api.c). */
struct json_keys {
	const char *const *gpu, *const *proc;
};
/* The snapshot on one line with only those keys of each GPU and process
 * (a process's "torch" brings "outside_allocator_bytes"; no "ended"). */
void json_snapshot_keys(FILE *f, const char *kind, vramz_ctx *ctx, const vramz_snapshot *snap,
			const struct json_keys *k);
/* Process kind names for p->type ("compute", "graphics", "mps"). */
void json_proc_types(struct jsonw *w, const char *key, unsigned type);

#endif
