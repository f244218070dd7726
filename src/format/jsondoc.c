/* SPDX-License-Identifier: Apache-2.0 */
/* jsondoc.c - JSON documents for snapshots, GPUs and processes (see format/jsondoc.h).
 * Keys follow the field table (lib/fields.c) so JSON, CSV and metrics use
 * the same names; unknown values are null, never a number. */
#include "format/jsondoc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "fields.h"
#include "procfields.h"
#include "format/fmt.h"
#include "vramz/daemon.h"

void json_envelope(struct jsonw *w, const char *kind)
{
	jw_obj(w, NULL);
	jw_u64(w, "schema", VRAMZ_JSON_SCHEMA_VERSION);
	jw_str(w, "vramz_version", VRAMZ_VERSION_STRING);
	jw_str(w, "kind", kind);
}

void json_begin(struct jsonw *w, const char *kind, vramz_ctx *ctx, const vramz_snapshot *snap)
{
	char t[40];
	const vramz_system_info *s = vramz_system(ctx);
	json_envelope(w, kind);
	if (snap) {
		jw_str(w, "time", fmt_iso_ms(t, sizeof t, snap->time_ms));
		jw_i64(w, "time_ms", snap->time_ms);
	}
	/* where the readings come from: the driver now, a daemon's snapshot
	 * (and how old it is), or a recorded log (age unknown: null) */
	vramz_daemon_info di;
	if (vramz_daemon_info_get(ctx, &di) == 0) {
		jw_str(w, "source", "daemon");
		jw_i64(w, "age_ms", di.age_ms);
		jw_u64(w, "daemon_pid", di.pid);
	} else {
		jw_str(w, "source", s->backend);
		jw_i64_if(w, "age_ms", strcmp(s->backend, "replay") != 0, 0);
	}
	jw_obj(w, "system");
	jw_str(w, "backend", s->backend);
	jw_str(w, "driver_version", *s->driver_version ? s->driver_version : NULL);
	jw_str(w, "nvml_version", *s->nvidia.nvml_version ? s->nvidia.nvml_version : NULL);
	if (s->nvidia.cuda_driver_version) {
		char v[16];
		snprintf(v, sizeof v, "%d.%d", s->nvidia.cuda_driver_version / 1000,
			 s->nvidia.cuda_driver_version % 1000 / 10);
		jw_str(w, "cuda_driver_version", v);
	} else {
		jw_null(w, "cuda_driver_version");
	}
	jw_end_obj(w);
}

void json_proc_types(struct jsonw *w, const char *key, unsigned type)
{
	jw_arr(w, key);
	if (type & VRAMZ_PT_COMPUTE)
		jw_str(w, NULL, "compute");
	if (type & VRAMZ_PT_GRAPHICS)
		jw_str(w, NULL, "graphics");
	if (type & VRAMZ_PT_MPS)
		jw_str(w, NULL, "mps");
	jw_end_arr(w);
}

/* Whether key is one of keys (NULL: every key is). */
static int want(const char *const *keys, const char *key)
{
	if (!keys)
		return 1;
	for (; *keys; keys++)
		if (!strcmp(*keys, key))
			return 1;
	return 0;
}

/* A GPU object of the keys listed (NULL: all), in the document's order. */
static void gpu_obj(struct jsonw *w, vramz_ctx *ctx, const vramz_snapshot *snap,
		    const vramz_gpu_sample *g, const char *const *keys)
{
	const vramz_gpu_info *gi = vramz_gpu(ctx, g->index);
	jw_obj(w, NULL);
	jw_u64(w, "index", g->index);
	if (want(keys, "uuid"))
		jw_str(w, "uuid", gi && *gi->uuid ? gi->uuid : NULL);
	if (want(keys, "name"))
		jw_str(w, "name", gi && *gi->name ? gi->name : NULL);
	if (want(keys, "pci_bus_id"))
		jw_str(w, "pci_bus_id", gi && *gi->pci_bus_id ? gi->pci_bus_id : NULL);
	if (want(keys, "vendor"))
		jw_str(w, "vendor", gi && *gi->vendor ? gi->vendor : NULL);
	jw_bool(w, "lost", g->lost);
	for (size_t i = 0; i < gpu_field_count; i++) {
		const struct field *f = &gpu_fields[i];
		if (!want(keys, f->name))
			continue;
		int ok = field_valid(f, g);
		if (f->type == FT_INT)
			jw_i64_if(w, f->name, ok, field_get(f, g));
		else
			jw_u64_if(w, f->name, ok, (uint64_t)field_get(f, g));
	}
	if (keys) { /* a lighter document: the fields asked for alone */
		jw_end_obj(w);
		return;
	}
	int memok = !g->lost && (g->valid & VRAMZ_F_MEM) && g->mem_total_bytes;
	jw_dbl_if(w, "mem_used_pct", memok,
		  memok ? 100.0 * (double)g->mem_used_bytes / (double)g->mem_total_bytes : 0, 1);
	jw_u64_if(w, "process_count", !g->lost && (g->valid & VRAMZ_F_PROCS), g->proc_count);
	if (snap && snap->mig_count) {
		jw_arr(w, "mig");
		for (unsigned i = 0; i < snap->mig_count; i++) {
			const vramz_mig_sample *m = &snap->migs[i];
			if (m->parent_index != g->index)
				continue;
			jw_obj(w, NULL);
			jw_u64(w, "mig_index", m->mig_index);
			jw_u64(w, "gpu_instance_id", m->gi_id);
			jw_u64(w, "compute_instance_id", m->ci_id);
			jw_str(w, "uuid", *m->uuid ? m->uuid : NULL);
			jw_u64_if(w, "mem_total_bytes", m->valid & VRAMZ_F_MEM, m->mem_total_bytes);
			jw_u64_if(w, "mem_used_bytes", m->valid & VRAMZ_F_MEM, m->mem_used_bytes);
			jw_u64_if(w, "mem_free_bytes", m->valid & VRAMZ_F_MEM, m->mem_free_bytes);
			jw_end_obj(w);
		}
		jw_end_arr(w);
	}
	jw_end_obj(w);
}

void json_gpu(struct jsonw *w, vramz_ctx *ctx, const vramz_snapshot *snap,
	      const vramz_gpu_sample *g)
{
	gpu_obj(w, ctx, snap, g, NULL);
}

/* A process object of the keys listed (NULL: all): the fields of
 * lib/procfields.c in its order, plus "visible" with "pid"; unknown
 * (invisible pid, no MIG) and empty strings are null. */
static void proc_obj(struct jsonw *w, vramz_ctx *ctx, const vramz_proc_sample *p,
		     const char *const *keys)
{
	const vramz_gpu_info *gi = vramz_gpu(ctx, p->gpu_index);
	jw_obj(w, NULL);
	for (size_t i = 0; i < proc_field_count; i++) {
		const struct proc_field *f = &proc_fields[i];
		const char *key = proc_field_json(f);
		int ok = proc_field_valid(f, p);
		if (!*key || (f->json_optional && !ok) || !want(keys, key))
			continue;
		switch (f->kind) {
		case PC_TIME: break;
		case PC_GPU: jw_u64(w, key, p->gpu_index); break;
		case PC_UUID: jw_str(w, key, gi && *gi->uuid ? gi->uuid : NULL); break;
		case PC_PID:
			jw_u64(w, key, p->pid);
			jw_bool(w, "visible", (p->valid & VRAMZ_P_VISIBLE) != 0);
			break;
		case PC_TYPE: json_proc_types(w, key, p->type); break;
		case PC_U32:
		case PC_UINT:
		case PC_U64: jw_u64_if(w, key, ok, proc_field_u64(f, p)); break;
		case PC_STR: {
			const char *v = (const char *)p + f->offset;
			jw_str(w, key, ok && *v ? v : NULL);
			break;
		}
		}
	}
	if (want(keys, "torch"))
		json_proc_torch(w, p);
	jw_end_obj(w);
}

void json_proc(struct jsonw *w, vramz_ctx *ctx, const vramz_proc_sample *p)
{
	proc_obj(w, ctx, p, NULL);
}

void json_proc_torch(struct jsonw *w, const vramz_proc_sample *p)
{
	jw_u64_if(w, "outside_allocator_bytes", p->valid & VRAMZ_P_OUTSIDE, p->outside_allocator_bytes);
	/* its parts (issue 37): the rows of lib/procfields.c with a part */
	if (!(p->valid & VRAMZ_P_OUTSIDE_PARTS)) {
		jw_null(w, "outside_parts");
	} else {
		jw_obj(w, "outside_parts");
		for (size_t i = 0; i < proc_field_count; i++)
			if (proc_fields[i].part)
				jw_u64(w, proc_fields[i].part, proc_field_u64(&proc_fields[i], p));
		jw_u64(w, "nccl_communicators", p->outside_nccl_comms);
		jw_end_obj(w);
	}
	if (!(p->valid & VRAMZ_P_TORCH)) {
		jw_null(w, "torch");
		return;
	}
	jw_obj(w, "torch");
	for (size_t i = 0; i < torch_field_count; i++) {
		const struct torch_field *f = &torch_fields[i];
		jw_u64_if(w, f->name, p->torch_valid & f->bit,
			  *(const uint64_t *)((const char *)p + f->offset));
	}
	jw_bool(w, "history", p->torch_valid & VRAMZ_T_HISTORY);
	jw_i64_if(w, "time_ms", p->torch_time_ms != 0, p->torch_time_ms);
	jw_end_obj(w);
}

#define ENDED_MAX 32

static void json_ended_one(struct jsonw *w, const struct agent_ended *e)
{
	const struct agent_figures *f = &e->fig;
	const struct agent_end *end = &f->end;
	char t[40], site[200];
	jw_obj(w, NULL);
	jw_u64(w, "pid", f->pid);
	jw_u64(w, "start_time_ticks", f->start_time_ticks);
	jw_u64(w, "uid", e->uid);
	jw_str(w, "time", end->time_ms ? fmt_iso_ms(t, sizeof t, end->time_ms) : NULL);
	jw_str(w, "how", agent_end_how_name(end->how));
	jw_i64_if(w, "status", end->has_status, end->status);
	jw_str(w, "exception", end->exception[0] ? end->exception : NULL);
	jw_bool(w, "oom", end->oom);
	/* the line that ran out (the oom record's), else the end's */
	const struct agent_frame *at = agent_oom_line(f);
	if (at)
		agent_site_text(site, sizeof site, at->file, at->line, at->func);
	jw_str(w, "site", at ? site : NULL);
	jw_u64_if(w, "ooms", f->oom_valid && f->oom_count, f->oom_count);
	jw_u64_if(w, "requested_bytes", f->oom_valid, f->oom_requested_bytes);
	jw_end_obj(w);
}

void json_ended(struct jsonw *w, vramz_ctx *ctx, const vramz_snapshot *snap)
{
	vramz_daemon_info di;
	if (strcmp(vramz_system(ctx)->backend, "replay") == 0 && vramz_daemon_info_get(ctx, &di))
		return; /* a recorded log: no agents to read now */
	struct agent_scan s = {0};
	struct agent_ended *e = malloc(ENDED_MAX * sizeof *e);
	int n = e ? agent_ended_list(&s, snap->procs, snap->proc_count, e, ENDED_MAX) : 0;
	jw_arr(w, "ended");
	for (int i = 0; i < n; i++)
		json_ended_one(w, &e[i]);
	jw_end_arr(w);
	agent_scan_free(&s);
	free(e);
}

/* The snapshot with the keys k lists (NULL: the whole document). */
static void snapshot_doc(FILE *f, const char *kind, vramz_ctx *ctx, const vramz_snapshot *snap,
			 int with_procs, int pretty, const struct json_keys *k)
{
	struct jsonw w;
	jw_init(&w, f, pretty);
	json_begin(&w, kind, ctx, snap);
	jw_arr(&w, "gpus");
	for (unsigned i = 0; i < snap->gpu_count; i++)
		gpu_obj(&w, ctx, snap, &snap->gpus[i], k ? k->gpu : NULL);
	jw_end_arr(&w);
	if (with_procs) {
		jw_arr(&w, "processes");
		for (unsigned i = 0; i < snap->proc_count; i++)
			proc_obj(&w, ctx, &snap->procs[i], k ? k->proc : NULL);
		jw_end_arr(&w);
		if (!k)
			json_ended(&w, ctx, snap);
	}
	jw_end_obj(&w);
	jw_finish(&w);
}

void json_snapshot(FILE *f, const char *kind, vramz_ctx *ctx, const vramz_snapshot *snap,
		   int with_procs, int pretty)
{
	snapshot_doc(f, kind, ctx, snap, with_procs, pretty, NULL);
}

void json_snapshot_keys(FILE *f, const char *kind, vramz_ctx *ctx, const vramz_snapshot *snap,
			const struct json_keys *k)
{
	snapshot_doc(f, kind, ctx, snap, 1, 0, k);
}
