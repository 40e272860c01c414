/* emit.c - placeholder until the subcommand is written. */
#include "cmd.h"

const struct poptOption emit_options[] = {
	POPT_AUTOHELP
	POPT_TABLEEND
};

int cmd_emit(int argc, const char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("emit", "not built yet");
	return EXIT_FAIL;
}
