/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-demo.c - `vramz demo`: vramz at work without a GPU.  It replays a
 * real recording (examples/h200-leak.csv: 3 minutes on 2 x NVIDIA H200, a
 * PyTorch job leaking 64 MiB/s on GPU 0 beside a steady one, and a busy
 * job on GPU 1) through the same views and diagnosis as a live machine:
 * the status table at the start, middle and end, then `analyze`.
 *
 * The recording is looked for in $VRAMZ_EXAMPLES, then beside the binary
 * (a build tree: build/../examples), then where `cmake --install` puts it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "status.h"

#ifndef VRAMZ_DATADIR
#define VRAMZ_DATADIR "/usr/local/share/vramz"
#endif

static const char demo_file[] = "h200-leak.csv";

static int find_demo(char *path, size_t len)
{
	char exe[PATH_MAX];
	const char *env = getenv("VRAMZ_EXAMPLES");
	if (env && *env) {
		snprintf(path, len, "%s/%s", env, demo_file);
		return access(path, R_OK);
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		const char *rel[] = {"/../examples", "/../../examples", "/../share/vramz/examples"};
		for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
			char cand[PATH_MAX + 64];
			snprintf(cand, sizeof cand, "%s%s/%s", exe, rel[i], demo_file);
			if (!access(cand, R_OK) && realpath(cand, path))
				return 0;
		}
	}
	snprintf(path, len, "%s/examples/%s", VRAMZ_DATADIR, demo_file);
	return access(path, R_OK);
}

static const char *report;

const struct opt demo_opts[] = {
	OPT_NOCOLOR,
	{0, "report", OPT_STR, &report, "FILE",
	 "write the recording's HTML report (vramz report) to FILE instead; - for stdout"},
	OPT_END};
const char demo_synopsis[] = "[--report FILE]";
const char demo_about[] =
	"Replays a real 2 x H200 recording (a PyTorch job leaking 64 MiB/s)\n"
	"through the status view and the diagnosis: vramz without a GPU.";

int cmd_demo(const struct cmd_args *args)
{
	char path[PATH_MAX + 64]; /* realpath() writes up to PATH_MAX */
	if (find_demo(path, sizeof path)) {
		cli_err("demo: cannot find examples/%s (set VRAMZ_EXAMPLES to its folder)", demo_file);
		return EXIT_FAIL;
	}
	if (report) {
		char *rargv[] = {"report", path, "-o", (char *)report, NULL};
		return args->run(4, rargv);
	}
	printf("vramz demo: not a live GPU; replaying %s, 3 minutes recorded on 2 x NVIDIA H200\n"
	       "(a PyTorch job leaking 64 MiB/s on GPU 0 beside a steady one; a busy job on GPU 1)\n\n",
	       path);
	g_opts.replay = path;
	vramz_ctx *ctx;
	if (cli_open(&ctx))
		return EXIT_FAIL;
	/* count the ticks, then show the first, the middle and the last */
	const vramz_snapshot *snap;
	unsigned ticks = 0;
	while (vramz_sample(ctx, VRAMZ_SAMPLE_PROCS, &snap) == 0)
		ticks++;
	cli_close(ctx);
	if (cli_open(&ctx))
		return EXIT_FAIL;
	for (unsigned t = 0; t < ticks; t++) {
		if (vramz_sample(ctx, VRAMZ_SAMPLE_PROCS, &snap) < 0)
			break;
		if (t == 0 || t == ticks / 2 || t + 1 == ticks) {
			status_print(stdout, ctx, snap, 1);
			putchar('\n');
		}
	}
	cli_close(ctx);
	printf("$ vramz analyze %s\n", path);
	fflush(stdout);
	char *aargv[] = {"analyze", path, NULL};
	int rc = args->run(2, aargv);
	/* a finding is the point of the demo, not a failure */
	return rc == EXIT_FINDING ? EXIT_OK : rc;
}
