/* SPDX-License-Identifier: Apache-2.0 */
/* test_rundir.c - the runtime-directory rule (docs/daemon.md), every
 * branch: a daemon and its readers must agree on one directory, and the
 * Python package implements the same rule, so a change here that is not a
 * change there leaves users' readers looking in the wrong place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rundir.h"
#include "vramz/daemon.h"

static void expect(int root, const char *env, const char *xdg, int publish, unsigned n,
		   int want_rc, const char *want)
{
	char buf[128];
	int rc = rundir_resolve(root, env, xdg, publish, n, buf, sizeof buf);
	assert_int_equal(rc, want_rc);
	if (want)
		assert_string_equal(buf, want);
}

static void override_wins_for_everyone(void **state)
{
	(void)state;
	expect(1, "/tmp/x", "/run/user/1000", 1, 0, 0, "/tmp/x");
	expect(0, "/tmp/x", "/run/user/1000", 0, 0, 0, "/tmp/x");
	/* and is the only place a reader looks */
	expect(0, "/tmp/x", "/run/user/1000", 0, 1, VRAMZ_ENOTFOUND, NULL);
	/* empty means unset */
	expect(1, "", NULL, 1, 0, 0, "/run/vramz");
}

static void root_uses_run(void **state)
{
	(void)state;
	expect(1, NULL, "/run/user/0", 1, 0, 0, "/run/vramz");
	expect(1, NULL, "/run/user/0", 0, 1, VRAMZ_ENOTFOUND, NULL);
}

static void user_publishes_in_xdg_and_reads_the_system_daemon_too(void **state)
{
	(void)state;
	expect(0, NULL, "/run/user/1000", 1, 0, 0, "/run/user/1000/vramz");
	expect(0, NULL, "/run/user/1000", 0, 0, 0, "/run/user/1000/vramz");
	expect(0, NULL, "/run/user/1000", 0, 1, 0, "/run/vramz");
	expect(0, NULL, "/run/user/1000", 0, 2, VRAMZ_ENOTFOUND, NULL);
}

static void user_without_xdg_cannot_publish(void **state)
{
	(void)state;
	expect(0, NULL, NULL, 1, 0, VRAMZ_ENOTFOUND, NULL);
	expect(0, NULL, "relative/dir", 1, 0, VRAMZ_ENOTFOUND, NULL);
	expect(0, NULL, NULL, 0, 0, 0, "/run/vramz");
}

static void too_long_is_a_range_error(void **state)
{
	(void)state;
	char buf[8];
	assert_int_equal(rundir_resolve(0, NULL, "/run/user/1000", 1, 0, buf, sizeof buf), VRAMZ_ERANGE);
}

static void public_calls_follow_the_environment(void **state)
{
	(void)state;
	char buf[256];
	setenv("VRAMZ_RUNTIME_DIR", "/some/where", 1);
	assert_int_equal(vramz_runtime_dir(buf, sizeof buf), 0);
	assert_string_equal(buf, "/some/where");
	assert_int_equal(vramz_runtime_dir_nth(0, buf, sizeof buf), 0);
	assert_string_equal(buf, "/some/where");
	assert_int_equal(vramz_runtime_dir_nth(1, buf, sizeof buf), VRAMZ_ENOTFOUND);
	unsetenv("VRAMZ_RUNTIME_DIR");
	setenv("XDG_RUNTIME_DIR", "/run/user/4242", 1);
	assert_int_equal(vramz_runtime_dir(buf, sizeof buf), 0);
	assert_string_equal(buf, geteuid() == 0 ? "/run/vramz" : "/run/user/4242/vramz");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(override_wins_for_everyone),
		cmocka_unit_test(root_uses_run),
		cmocka_unit_test(user_publishes_in_xdg_and_reads_the_system_daemon_too),
		cmocka_unit_test(user_without_xdg_cannot_publish),
		cmocka_unit_test(too_long_is_a_range_error),
		cmocka_unit_test(public_calls_follow_the_environment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
