/* SPDX-License-Identifier: Apache-2.0 */
/* xid.c - the Xid codes operators page on (xid.h), from NVIDIA's Xid
 * catalogue: the meaning of each and the first thing to do.  Every Xid
 * the driver raises as "critical" is reported (the xid finding) whether
 * or not it is in this table; the table gives it words.  A new row here
 * needs its line in docs/health.md ("Xid codes"). */
#include "xid.h"

#include <stddef.h>

const struct xid_info xid_table[] = {
	{13, "graphics engine exception (often the application's own fault)",
	 "check the job; repeated on one GPU only, run diagnostics", 0},
	{31, "GPU memory page fault (an illegal address, usually the application)",
	 "check the job's memory accesses; repeated across jobs, run diagnostics", 0},
	{43, "GPU stopped processing (a kernel was killed or hung)",
	 "restart the job; repeated, run diagnostics", 0},
	{45, "preemptive cleanup after an earlier error or a killed process",
	 "look for the Xid before it", 0},
	{48, "double-bit ECC error (uncorrectable VRAM error)",
	 "the processes on the GPU may have read bad data: drain it and reset it", 1},
	{61, "internal micro-controller breakpoint or warning",
	 "reset the GPU; repeated, replace it", 0},
	{62, "internal micro-controller halt",
	 "reset the GPU; repeated, replace it", 0},
	{63, "row remapping recorded (ECC page retirement or row remap)",
	 "drain the GPU and reset it to apply the remap", 0},
	{64, "row remapping failed (ECC page retirement or row remap failure)",
	 "replace the GPU: it has no spare rows left", 0},
	{74, "NVLink error", "check the NVLink fabric; reset the GPU", 0},
	{79, "GPU has fallen off the bus",
	 "drain the node and reboot it; check power, cooling and the slot", 0},
	{92, "high single-bit ECC error rate",
	 "watch the corrected count; plan to drain and reset the GPU", 1},
	{94, "contained ECC error (uncorrectable, the affected process was stopped)",
	 "restart the affected job; reset the GPU when it is free", 1},
	{95, "uncontained ECC error (uncorrectable, every process on the GPU is affected)",
	 "drain the GPU and reset it now", 1},
};
const unsigned xid_table_count = sizeof xid_table / sizeof xid_table[0];

const struct xid_info *xid_lookup(unsigned code)
{
	for (unsigned i = 0; i < xid_table_count; i++)
		if (xid_table[i].code == code)
			return &xid_table[i];
	return NULL;
}

const char *xid_meaning(unsigned code)
{
	const struct xid_info *x = xid_lookup(code);
	return x ? x->meaning : "an Xid vramz has no words for (see NVIDIA's Xid catalogue)";
}
