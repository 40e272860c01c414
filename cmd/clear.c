/* clear.c - placeholder until the subcommand is written. */
#include "cmd.h"

const struct poptOption clear_options[] = {
	POPT_AUTOHELP
	POPT_TABLEEND
};

int cmd_clear(int argc, const char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("clear", "not built yet");
	return EXIT_FAIL;
}
