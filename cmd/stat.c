/* stat.c - placeholder until the subcommand is written. */
#include "cmd.h"

const struct poptOption stat_options[] = {
	POPT_AUTOHELP
	POPT_TABLEEND
};

int cmd_stat(int argc, const char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("stat", "not built yet");
	return EXIT_FAIL;
}
