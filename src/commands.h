/* commands.h - subcommands beyond the core four, contributed by optional
 * parts.  Each part's src/AREA.cmake adds its sources and defines
 * VRAMZ_HAVE_AREA, which switches its rows on here, so parts never edit
 * each other's files. */
#ifndef VRAMZ_COMMANDS_H
#define VRAMZ_COMMANDS_H

#include <unistd.h>

#include "cli.h"

#ifdef VRAMZ_HAVE_LOG
int cmd_log(int argc, char **argv);
int cmd_replay(int argc, char **argv);
#define ROWS_LOG                                                        \
	{"log", cmd_log, "record every GPU (and process) to a CSV log"},  \
	{"replay", cmd_replay, "play a recorded log back as the live views"},
#else
#define ROWS_LOG
#endif

#ifdef VRAMZ_HAVE_DIAGNOSE
int cmd_analyze(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_demo(int argc, char **argv);
#define ROWS_DIAGNOSE                                                             \
	{"analyze", cmd_analyze, "diagnose a recorded log: leaks, idle holders, ..."}, \
	{"watch", cmd_watch, "diagnose live: a line per new or changed finding"},     \
	{"demo", cmd_demo, "replay a real 2 x H200 recording: vramz without a GPU"},
#else
#define ROWS_DIAGNOSE
#endif

#ifdef VRAMZ_HAVE_SERVE
int cmd_serve(int argc, char **argv);
#define ROWS_SERVE {"serve", cmd_serve, "Prometheus exporter (/metrics)"},
#else
#define ROWS_SERVE
#endif

#ifdef VRAMZ_HAVE_JOBS
int cmd_run(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_pick(int argc, char **argv);
int cmd_kill(int argc, char **argv);
#define ROWS_JOBS                                                               \
	{"run", cmd_run, "run a command and report its peak VRAM per GPU"},     \
	{"fit", cmd_fit, "find the largest batch size that fits"},             \
	{"pick", cmd_pick, "choose the freest GPUs (CUDA_VISIBLE_DEVICES)"},   \
	{"kill", cmd_kill, "terminate processes holding VRAM, safely"},
#else
#define ROWS_JOBS
#endif

#ifdef VRAMZ_HAVE_TUI
int cmd_top(int argc, char **argv);
#define ROWS_TUI {"top", cmd_top, "live dashboard of every GPU and process"},
#else
#define ROWS_TUI
#endif

#ifdef VRAMZ_HAVE_REPORT
int cmd_report(int argc, char **argv);
#define ROWS_REPORT {"report", cmd_report, "a log as one HTML page with plots (docs/report.md)"},
#else
#define ROWS_REPORT
#endif

#define VRAMZ_EXTRA_COMMANDS ROWS_LOG ROWS_DIAGNOSE ROWS_SERVE ROWS_JOBS ROWS_TUI ROWS_REPORT

/* `vramz` with no command: the dashboard on a terminal, else the table. */
static inline int default_command(int argc, char **argv)
{
#ifdef VRAMZ_HAVE_TUI
	if (isatty(STDOUT_FILENO) && isatty(STDIN_FILENO))
		return cmd_top(argc, argv);
#endif
	return cmd_status(argc, argv);
}

#endif
