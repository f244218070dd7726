/* diagconf.h - what `vramz analyze` and `vramz watch` share: the table of
 * diagnosis thresholds (one table gives both the command-line options and
 * the config file keys), the config file reader, and how a finding is
 * printed as text or JSON. */
#ifndef VRAMZ_DIAGCONF_H
#define VRAMZ_DIAGCONF_H

#include <stdio.h>

#include "cli.h"
#include "format/jsonw.h"
#include "vramz/diagnose.h"

/* Settings a command takes besides the engine's thresholds. */
struct diag_cmd_conf {
	const char *fail_on;     /* analyze: "info" | "warning" | "critical" */
	const char *min_severity; /* watch: findings shown and exec'd */
};

/* Number of threshold options (for sizing an opt array). */
unsigned diagconf_opt_count(void);
/* Writes the threshold options pointing into cfg to out[0..count-1]. */
void diagconf_opts(vramz_diag_config *cfg, struct opt *out);

/* Reads $XDG_CONFIG_HOME/vramz/config (else ~/.config/vramz/config) into
 * cfg and cc; a missing file is fine.  A bad line prints one error naming
 * FILE:LINE and returns EXIT_USAGE; 0 otherwise. */
int diagconf_load(vramz_diag_config *cfg, struct diag_cmd_conf *cc);

/* One finding as a JSON object (key NULL inside an array). */
void diagconf_json(struct jsonw *w, const char *key, const vramz_finding *f);
/* "critical", "warning", "info" in colour when on a terminal */
const char *diagconf_sev_label(FILE *f, enum vramz_severity s, char *buf, size_t len);

#endif
