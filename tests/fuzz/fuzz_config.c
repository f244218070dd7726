/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_config.c - a fuzz target for the config file parser
 * (diagconf_parse in src/analyze/diagconf.c: $XDG_CONFIG_HOME/vramz/config, read by
 * watch, analyze, top and serve).  libFuzzer: tests/fuzz/run.sh config;
 * without it, smoke_main.c (ctest fuzz.config).  The input is the file's
 * text; a parse either fails (EXIT_USAGE, one error line, silenced here)
 * or leaves every threshold inside the range the command line would
 * accept, so no file can smuggle in what an option refuses.
 */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "analyze/diagconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int devnull = -1;
	if (devnull < 0)
		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	vramz_diag_config cfg;
	struct diag_cmd_conf cc = {0};
	vramz_diag_config_defaults(&cfg);
	/* the parser's error line goes to stderr: away from the fuzzer's */
	fflush(stderr);
	int saved = dup(2);
	dup2(devnull, 2);
	int rc = diagconf_parse("fuzz.conf", (const char *)data, size, &cfg, &cc);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (rc != 0 && rc != EXIT_USAGE)
		abort();
	if (rc == 0) {
		if (!(cfg.leak_p > 0 && cfg.leak_p < 1) || !(cfg.leak_min_tau >= 0 && cfg.leak_min_tau <= 1) ||
		    !(cfg.imbalance_ratio >= 1) || !isfinite(cfg.imbalance_ratio) ||
		    !(cfg.throttle_share >= 0 && cfg.throttle_share <= 1) ||
		    !(cfg.pcie_share >= 0 && cfg.pcie_share <= 1) ||
		    cfg.mem_temp_margin_c < 0 || cfg.mem_temp_margin_c > 200 ||
		    cfg.mem_temp_max_c < 0 || cfg.mem_temp_max_c > 200 || cfg.window_ms < 0 ||
		    cfg.leak_warmup_ms < 0 || cfg.idle_ms < 0 || cfg.report_after_ms < 0)
			abort();
		enum vramz_severity s;
		if ((cc.fail_on && vramz_severity_parse(cc.fail_on, &s)) ||
		    (cc.min_severity && vramz_severity_parse(cc.min_severity, &s)))
			abort();
	}
	return 0;
}
