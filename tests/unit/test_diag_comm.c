/* SPDX-License-Identifier: Apache-2.0 */
/* test_diag_comm.c - the memory outside PyTorch's allocator told in parts
 * (issue 37): the outside_allocator finding names the largest part with
 * advice that fits it, and communication_memory is raised when NCCL's
 * communicators pass comm_share of the GPU (a warning) or when several
 * groups each cost memory (a hint), never for a process whose agent
 * measures no parts or holds one small communicator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "diag_sim.h"


/* a process with an agent: used on GPU 0, reserved by its allocator, and
 * the parts of the rest (ctx, libs, nccl; other what is left) */
static vramz_proc_sample *proc(struct sim *m, uint32_t pid, double used, double reserved,
			       double ctx, double libs, double nccl, unsigned comms)
{
	vramz_proc_sample *p = sim_proc(m, 0, pid, 77);
	p->uid = (uint32_t)geteuid();
	p->used_bytes = (uint64_t)used;
	p->valid |= VRAMZ_P_TORCH | VRAMZ_P_OUTSIDE | VRAMZ_P_OUTSIDE_PARTS;
	p->torch_valid = VRAMZ_T_ALLOCATED | VRAMZ_T_RESERVED;
	p->torch_reserved_bytes = (uint64_t)reserved;
	p->torch_allocated_bytes = (uint64_t)reserved;
	p->outside_allocator_bytes = (uint64_t)(used - reserved);
	p->outside_context_bytes = (uint64_t)ctx;
	p->outside_libraries_bytes = (uint64_t)libs;
	p->outside_nccl_bytes = (uint64_t)nccl;
	p->outside_other_bytes = (uint64_t)(used - reserved - ctx - libs - nccl);
	p->outside_nccl_comms = comms;
	return p;
}

static vramz_diag *run(struct sim *m)
{
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	assert_true(c.comm_share == 0.15);
	assert_int_equal(c.comm_min_groups, 4);
	vramz_diag *d = vramz_diag_new(&c);
	assert_non_null(d);
	for (int s = 0; s <= 10; s++)
		assert_int_equal(sim_feed(d, m, 1000000 + s * 1000, NULL), 0);
	return d;
}

static const vramz_finding *find(vramz_diag *d, enum vramz_finding_kind k, uint32_t pid)
{
	const vramz_finding *f;
	unsigned n = vramz_diag_findings(d, &f);
	for (unsigned i = 0; i < n; i++)
		if (f[i].kind == k && f[i].pid == pid)
			return &f[i];
	return NULL;
}

/* the words: the parts largest first, the communicators counted */
static void outside_allocator_names_the_largest_part(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m, 1, 80 * GiB);
	/* 3.5 GiB outside of 5 GiB: 4 communicators of 564 MiB, the context,
	 * cuDNN, and 644 MiB no measurement told */
	proc(&m, 100, 5 * GiB, 1.5 * GiB, 610 * MiB, 74 * MiB, 4 * 564 * MiB, 4);
	/* an agent from before issue 37: the old words */
	vramz_proc_sample *old = proc(&m, 101, 5 * GiB, 1.5 * GiB, 0, 0, 0, 0);
	old->valid &= ~(uint32_t)VRAMZ_P_OUTSIDE_PARTS;
	/* mostly the context (a process with a small allocator) */
	proc(&m, 102, 3 * GiB, 0.5 * GiB, 2 * GiB, 0, 0, 0);
	vramz_diag *d = run(&m);
	char buf[512];
	const vramz_finding *f = find(d, VRAMZ_FK_OUTSIDE_ALLOCATOR, 100);
	assert_non_null(f);
	assert_true(f->figures & VRAMZ_FG_PARTS);
	assert_int_equal(f->outside_nccl_bytes, (uint64_t)(4 * 564 * MiB));
	assert_int_equal(f->nccl_comms, 4);
	vramz_finding_summary(f, buf, sizeof buf);
	assert_non_null(strstr(buf, "holds 3.5 GiB outside PyTorch's allocator, 70% of its 5.0 GiB: "
				    "2.2 GiB in 4 NCCL communicators, 644 MiB other, "
				    "610 MiB CUDA context, 74 MiB CUDA libraries"));
	vramz_finding_advice(f, buf, sizeof buf);
	assert_non_null(strstr(buf, "NCCL's communicators"));
	assert_non_null(strstr(buf, "NCCL_NVLS_ENABLE=0"));
	assert_non_null(strstr(buf, "NCCL_BUFFSIZE"));

	f = find(d, VRAMZ_FK_OUTSIDE_ALLOCATOR, 101);
	assert_non_null(f);
	assert_false(f->figures & VRAMZ_FG_PARTS);
	vramz_finding_summary(f, buf, sizeof buf);
	assert_non_null(strstr(buf, "of its 5.0 GiB"));
	assert_null(strstr(buf, "of its 5.0 GiB:"));

	f = find(d, VRAMZ_FK_OUTSIDE_ALLOCATOR, 102);
	assert_non_null(f);
	vramz_finding_summary(f, buf, sizeof buf);
	assert_non_null(strstr(buf, ": 2.0 GiB CUDA context, 512 MiB other"));
	vramz_finding_advice(f, buf, sizeof buf);
	assert_non_null(strstr(buf, "the CUDA context, paid once per process and GPU"));
	vramz_diag_free(d);
}

/* 15 % of an 80 GiB GPU is 12 GiB: 24 communicators of 564 MiB pass it */
static void communication_memory_past_its_share(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m, 1, 80 * GiB);
	proc(&m, 200, 40 * GiB, 26 * GiB, 610 * MiB, 0, 24 * 564 * MiB, 24);
	proc(&m, 201, 40 * GiB, 36 * GiB, 610 * MiB, 0, 2 * 564 * MiB, 2); /* 2 groups: no */
	vramz_diag *d = run(&m);
	const vramz_finding *f = find(d, VRAMZ_FK_COMMUNICATION_MEMORY, 200);
	assert_non_null(f);
	assert_int_equal(f->severity, VRAMZ_SEV_WARNING);
	assert_int_equal(f->bytes, (uint64_t)(24 * 564 * MiB));
	assert_int_equal(f->ref_bytes, (uint64_t)(80 * GiB));
	assert_int_equal(f->count, 24);
	assert_string_equal(vramz_finding_kind_str(f->kind), "communication_memory");
	char buf[512];
	vramz_finding_summary(f, buf, sizeof buf);
	assert_non_null(strstr(buf, "NCCL's communicators hold 13.2 GiB (24 communicators, 564 MiB "
				    "each), 17% of the GPU's 80.0 GiB"));
	vramz_finding_advice(f, buf, sizeof buf);
	assert_non_null(strstr(buf, "create fewer groups, or create them lazily"));
	assert_null(find(d, VRAMZ_FK_COMMUNICATION_MEMORY, 201));
	vramz_diag_free(d);
}

/* several groups, each costing memory: a hint while the share is small */
static void communication_memory_growing_with_groups(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m, 1, 141 * GiB);
	proc(&m, 300, 20 * GiB, 16 * GiB, 610 * MiB, 0, 4 * 564 * MiB, 4);
	proc(&m, 301, 20 * GiB, 16 * GiB, 610 * MiB, 0, 4 * 8 * MiB, 4); /* cheap groups */
	vramz_proc_sample *old = proc(&m, 302, 20 * GiB, 16 * GiB, 0, 0, 0, 0); /* no parts */
	old->valid &= ~(uint32_t)VRAMZ_P_OUTSIDE_PARTS;
	vramz_diag *d = run(&m);
	const vramz_finding *f = find(d, VRAMZ_FK_COMMUNICATION_MEMORY, 300);
	assert_non_null(f);
	assert_int_equal(f->severity, VRAMZ_SEV_INFO);
	assert_true(f->figures & VRAMZ_FG_PARTS);
	assert_null(find(d, VRAMZ_FK_COMMUNICATION_MEMORY, 301));
	assert_null(find(d, VRAMZ_FK_COMMUNICATION_MEMORY, 302));
	vramz_diag_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(outside_allocator_names_the_largest_part),
		cmocka_unit_test(communication_memory_past_its_share),
		cmocka_unit_test(communication_memory_growing_with_groups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
