/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_config.c - the diagnosis config file (src/analyze/diagconf.c)
 * takes the same values as the command line and refuses what it refuses,
 * in one line naming FILE:LINE; a line too long or holding a NUL is an
 * error, never split or cut.  src/cli.c, diagconf.c and fmt.c are the
 * tool's, compiled in directly; the capture is cli_harness.h's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.c"
#include "analyze/diagconf.c"
#include "format/fmt.c" /* diagconf.c prints with it */

#include "cli_harness.h"

struct conf_run {
	int rc;
	vramz_diag_config cfg;
	struct diag_cmd_conf cc;
	struct capture cap;
};

static void conf(struct conf_run *c, const char *text, size_t len)
{
	memset(c, 0, sizeof *c);
	vramz_diag_config_defaults(&c->cfg);
	capture_start(&c->cap);
	c->rc = diagconf_parse("/etc/cfg", text, len, &c->cfg, &c->cc);
	capture_end(&c->cap);
}

static void conf_bad(const char *text, const char *want)
{
	struct conf_run c;
	conf(&c, text, strlen(text));
	if (c.rc != EXIT_USAGE)
		fail_msg("'%s': rc %d, want EXIT_USAGE", text, c.rc);
	if (!strstr(c.cap.errbuf, want))
		fail_msg("'%s': stderr '%s' does not say '%s'", text, c.cap.errbuf, want);
	assert_int_equal(lines(c.cap.errbuf), 1);
}

static void test_config_values(void **state)
{
	(void)state;
	struct conf_run c;
	const char *ok = "# thresholds\n"
			 "leak-p = 0.01\n"
			 "  leak-min-tau=0.25   # weaker trends too\n"
			 "\n"
			 "leak-min-rise = 128MiB\r\n"
			 "min-severity = warning\n"
			 "mem-temp-max = 90";
	conf(&c, ok, strlen(ok));
	assert_int_equal(c.rc, 0);
	assert_true(c.cfg.leak_p == 0.01);
	assert_true(c.cfg.leak_min_tau == 0.25);
	assert_int_equal(c.cfg.leak_min_rise_bytes, 128u << 20);
	assert_int_equal(c.cfg.mem_temp_max_c, 90);
	assert_string_equal(c.cc.min_severity, "warning");

	/* what the command line refuses, the file refuses, naming FILE:LINE */
	conf_bad("leak-p = nan\n", "/etc/cfg:1: bad value 'nan' for leak-p: want a number above 0 and below 1");
	conf_bad("\nleak-p = inf\n", "/etc/cfg:2: bad value 'inf' for leak-p");
	conf_bad("leak-min-tau = -5\n", "/etc/cfg:1: bad value '-5' for leak-min-tau: want a number from 0 to 1");
	conf_bad("leak-min-rise = 0x1p4\n", "/etc/cfg:1: bad value '0x1p4' for leak-min-rise");
	conf_bad("imbalance-ratio = 0.5\n", "imbalance-ratio: want a number of 1 or more");
	conf_bad("leak-p = 0x1p-4\n", "'0x1p-4' for leak-p");
	conf_bad("mem-temp-max = 4294967295\n", "'4294967295' for mem-temp-max");
	conf_bad("window = soon\n", "/etc/cfg:1: bad value 'soon' for window");
	conf_bad("bogus = 1\n", "/etc/cfg:1: unknown key 'bogus'");
	conf_bad("just words\n", "/etc/cfg:1: expected 'key = value'");
	conf_bad("fail-on = loud\n", "/etc/cfg:1: bad fail-on 'loud'");
}

/* A line over 1023 bytes is an error naming file and line, never split
 * with its tail read as a line of its own (the tail here would be a valid
 * "leak-p = 0.5"). */
static void test_config_long_line(void **state)
{
	(void)state;
	char text[2200];
	size_t n = (size_t)snprintf(text, sizeof text, "leak-p = 0.01\n# ");
	memset(text + n, 'x', 1200 - n);
	n = 1200;
	n += (size_t)snprintf(text + n, sizeof text - n, "leak-p = 0.5\n");
	conf_bad(text, "/etc/cfg:2: line longer than 1023 bytes");

	/* exactly 1023 bytes (without the newline) is still a line */
	struct conf_run c;
	n = (size_t)snprintf(text, sizeof text, "leak-p = 0.02 #");
	memset(text + n, 'y', 1023 - n);
	text[1023] = '\n';
	conf(&c, text, 1024);
	assert_int_equal(c.rc, 0);
	assert_true(c.cfg.leak_p == 0.02);

	conf(&c, "leak-p = 0.5\0leak-p = 0.1\n", 26);
	assert_int_equal(c.rc, EXIT_USAGE);
	assert_non_null(strstr(c.cap.errbuf, "/etc/cfg:1: a NUL byte"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_values),
		cmocka_unit_test(test_config_long_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
