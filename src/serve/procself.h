/* SPDX-License-Identifier: Apache-2.0 */
/* procself.h - the process_* series every Prometheus exporter carries
 * (client_golang's process collector: CPU time, memory, file descriptors,
 * start time), read from /proc/self, so the dashboards and alerts written
 * for node_exporter's or dcgm-exporter's own health (a leaking exporter, one
 * near its fd limit, one restarting) work on vramz unchanged.
 *
 * They are read once a tick with the rest of the body, not per scrape:
 * scrapes only hand out the last body (serve/http.c), so the figures are
 * at most --interval old.
 */
#ifndef VRAMZ_SERVE_PROCSELF_H
#define VRAMZ_SERVE_PROCSELF_H

#include "format/prom.h"

/* Appends the series client_golang names, with its HELP and TYPE; a
 * figure /proc cannot give is left out (no sample), as unavailable values
 * are everywhere.  proc is the proc root ("/proc"). */
void serve_procself_render(struct prom_buf *b, const char *proc);

#endif
