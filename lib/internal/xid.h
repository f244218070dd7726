/* SPDX-License-Identifier: Apache-2.0 */
/* xid.h - the table of the driver's Xid error codes vramz names (xid.c):
 * what each means and what to do, and which are memory errors.  The
 * findings (lib/diagnose/health.c), the events file (src/evwatch.c) and
 * docs/health.md's table say the same; tests/unit/test_diag_health.c
 * checks docs/health.md lists every row.  Not installed. */
#ifndef VRAMZ_XID_H
#define VRAMZ_XID_H

struct xid_info {
	unsigned code;
	const char *meaning;   /* "double-bit ECC error" */
	const char *action;    /* "drain the GPU and reset it" */
	int memory;            /* 1: a VRAM error, vram_errors critical (48, 92,
				  94, 95; 63/64 are row_remap's) */
};

extern const struct xid_info xid_table[];
extern const unsigned xid_table_count;

/* The row of code, or NULL for a code the table does not name. */
const struct xid_info *xid_lookup(unsigned code);
/* Its meaning, or "an Xid vramz has no words for" for one not in the table. */
const char *xid_meaning(unsigned code);

#endif
