/* main.c - the vramz tool: global options, then one subcommand from the
 * table below.  With no subcommand it shows `status` (or, on a terminal
 * with the dashboard built in, `top`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} cmds[] = {
	{"status", cmd_status, "memory, utilization and processes of each GPU (default)"},
	{"ps", cmd_ps, "processes holding VRAM, per GPU, with user and container"},
	{"info", cmd_info, "hardware facts: memory type, bus width, bandwidth, PCIe, NVLink, modes"},
	{"topo", cmd_topo, "GPU-to-GPU interconnect matrix (NVLink / PCIe)"},
	VRAMZ_EXTRA_COMMANDS
};

static void usage(FILE *f)
{
	fprintf(f, "usage: vramz [COMMAND] [OPTIONS]\n\n"
		   "A VRAM monitor and diagnostician for machines with many GPUs.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\noptions every command takes:\n"
		   "  -g, --gpus LIST   indices, ranges (0-3), UUID prefixes, PCI bus ids\n"
		   "  --json            machine-readable output (docs/json.md)\n"
		   "  -h, --help        help for vramz or a command\n"
		   "  --version         print the version\n"
		   "\nNO_COLOR=1 turns colour off.  Exit codes: 0 ok, 1 failure, 2 bad usage.\n");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
			 !strcmp(argv[1], "help"))) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			char *hargv[] = {argv[2], "-h", NULL};
			for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
				if (!strcmp(cmds[i].name, argv[2]))
					return cmds[i].fn(2, hargv);
		}
		usage(stdout);
		return EXIT_OK;
	}
	if (argc > 1 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
		printf("vramz %s (library %s)\n", VRAMZ_VERSION_STRING, vramz_version());
		return EXIT_OK;
	}
	if (argc < 2 || argv[1][0] == '-') {
		/* options only: they belong to the default command */
		return default_command(argc, argv);
	}
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(cmds[i].name, argv[1]))
			return cmds[i].fn(argc - 1, argv + 1);
	cli_err("unknown command '%s' (see vramz -h)", argv[1]);
	return EXIT_USAGE;
}
