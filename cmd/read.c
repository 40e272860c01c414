/* read.c - placeholder until the subcommand is written. */
#include "cmd.h"

const struct poptOption read_options[] = {
	POPT_AUTOHELP
	POPT_TABLEEND
};

int cmd_read(int argc, const char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("read", "not built yet");
	return EXIT_FAIL;
}
