/* dump.c - placeholder until the subcommand is written. */
#include "cmd.h"

const struct poptOption dump_options[] = {
	POPT_AUTOHELP
	POPT_TABLEEND
};

int cmd_dump(int argc, const char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("dump", "not built yet");
	return EXIT_FAIL;
}
