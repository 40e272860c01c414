/* follow.c - placeholder until the subcommand is written. */
#include "cmd.h"

const struct poptOption follow_options[] = {
	POPT_AUTOHELP
	POPT_TABLEEND
};

int cmd_follow(int argc, const char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("follow", "not built yet");
	return EXIT_FAIL;
}
