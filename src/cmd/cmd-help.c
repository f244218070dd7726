/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-help.c - `vramz help [CMD]`: vramz -h, or CMD's -h through the same
 * lookup and preamble as `vramz CMD -h` (one way to reach a command).
 * It parses its own words (its row has no option table), and asks the
 * dispatcher that ran it for both (cmd_args.usage, .run) rather than
 * calling back into main.c.
 */
#include "commands.h"

#include <stdio.h>
#include <string.h>

int cmd_help(const struct cmd_args *a)
{
	if (a->n < 2 || !strcmp(a->v[1], "-h") || !strcmp(a->v[1], "--help")) {
		a->usage(stdout);
		return EXIT_OK;
	}
	char *hargv[] = {a->v[1], "-h", NULL};
	return a->run(2, hargv);
}
