/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-replay.c - `vramz replay FILE`: a recorded log played back as `vramz
 * status` shows a live machine, tick by tick, at the recorded pace (or
 * faster, or all at once), or as one JSON document per line.
 *
 * The log is opened as a context with the replay backend (lib/log/replay.c),
 * so what is printed is exactly what the live commands print: the same
 * table code, the same JSON shapes.  This is also what lets a laptop with
 * no GPU show vramz working on a real recording.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "format/fmt.h"
#include "format/jsondoc.h"
#include "status.h"

/* The longest pause between two ticks: a logger stopped overnight and
 * started again should not freeze the replay for hours. */
#define MAX_PAUSE_MS 5000

static void pause_ms(double ms)
{
	if (ms <= 0)
		return;
	if (ms > MAX_PAUSE_MS)
		ms = MAX_PAUSE_MS;
	struct timespec ts = {.tv_sec = (time_t)(ms / 1000),
			      .tv_nsec = (long)(fmod(ms, 1000) * 1e6)};
	while (nanosleep(&ts, &ts))
		;
}

static double speed; /* not given (OPT_FACTOR refuses 0) */
static int fast, no_procs;

const struct opt replay_opts[] = {
	{0, "speed", OPT_FACTOR, &speed, "X", "play X times faster than recorded (default 1 on a terminal)"},
	{0, "fast", OPT_FLAG, &fast, NULL, "print every tick at once (default when not a terminal)"},
	OPT_JSON,
	OPT_GPUS,
	{'P', "no-procs", OPT_FLAG, &no_procs, NULL, "GPUs only, no process table"},
	OPT_NOCOLOR,
	OPT_END,
};
const char replay_synopsis[] = "FILE [--speed X | --fast] [--json] [-g LIST]";
const char replay_about[] =
	"Plays a log recorded by `vramz log` back as `vramz status` would show it,\n"
	"tick by tick (with --json: one JSON document per line).";

int cmd_replay(const struct cmd_args *args)
{
	const char *path = args->v[0];
	int tty = isatty(STDOUT_FILENO);
	if (speed == 0)
		speed = fast || !tty || g_opts.json ? INFINITY : 1;
	if (fast)
		speed = INFINITY;

	vramz_ctx *ctx;
	g_opts.replay = path;
	int ex = cli_open(&ctx);
	if (ex)
		return ex;
	int64_t prev_ms = 0, last_dt_ms = 0;
	unsigned ticks = 0;
	for (;;) {
		const vramz_snapshot *snap;
		int rc = vramz_sample(ctx, no_procs ? 0 : VRAMZ_SAMPLE_PROCS, &snap);
		if (rc == VRAMZ_EEOF)
			break;
		if (rc < 0 && rc != VRAMZ_ELOST) {
			fflush(stdout);
			cli_err("%s", *vramz_last_error(ctx) ? vramz_last_error(ctx) : vramz_strerror(rc));
			cli_close(ctx);
			return EXIT_FAIL;
		}
		/* the one time rule (docs/diagnoses.md, "Time"): a recorded
		 * clock that steps back is no error; that tick follows the
		 * previous one at the log's cadence, and the step is noted */
		int64_t dt_ms = snap->time_ms - prev_ms;
		if (ticks && dt_ms < 0) {
			char a[32];
			cli_err("note: %s: the recorded clock steps back %s at tick %u; "
				"played at the log's cadence", path,
				fmt_duration(a, sizeof a, -dt_ms), ticks + 1);
			dt_ms = last_dt_ms;
		} else if (ticks) {
			last_dt_ms = dt_ms;
		}
		if (ticks++ && isfinite(speed))
			pause_ms((double)dt_ms / speed);
		prev_ms = snap->time_ms;
		if (g_opts.json) {
			json_snapshot(stdout, "replay", ctx, snap, 1, 0); /* one line per tick */
		} else {
			if (tty && isfinite(speed))
				fputs("\033[H\033[2J", stdout); /* redraw in place, like watch */
			else if (ticks > 1)
				fputc('\n', stdout);
			status_print(stdout, ctx, snap, !no_procs);
		}
		if (isfinite(speed))
			fflush(stdout);
	}
	cli_close(ctx);
	if (ticks == 0) {
		cli_err("%s: the log holds no samples", path);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
