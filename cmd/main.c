/*
 * main.c - the kmsg tool: a table of subcommands and the dispatch to them.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

const struct kmsg_cmd kmsg_commands[] = {
	{ "emit",   cmd_emit,   "append messages to the log (logger's habits)", emit_options },
	{ "read",   cmd_read,   "print the log (dmesg's options and formats)", read_options },
	{ "follow", cmd_follow, "print the last records, then new ones as they come", follow_options },
	{ "clear",  cmd_clear,  "mark everything so far as cleared (dmesg -C)", clear_options },
	{ "dump",   cmd_dump,   "write a compressed snapshot readable offline", dump_options },
	{ "stat",   cmd_stat,   "show the state of a log: size, records, losses", stat_options },
	{ NULL, NULL, NULL, NULL }
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: kmsg <command> [options]\n\nCommands:\n");
	for (const struct kmsg_cmd *c = kmsg_commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->summary);
	fprintf(f, "\n'kmsg <command> --help' lists a command's options; "
		   "kmsg(1) has the whole manual.\n");
}

/* Prints one line per option of a popt table, tables it includes too. */
static void list_table(const struct poptOption *opts)
{
	for (const struct poptOption *o = opts; o->longName || o->shortName || o->arg; o++) {
		unsigned type = o->argInfo & POPT_ARG_MASK;
		if (type == POPT_ARG_INCLUDE_TABLE) {
			if (o->arg != (void *)poptHelpOptions)
				list_table(o->arg);
			continue;
		}
		if (type == POPT_ARG_CALLBACK || (o->argInfo & POPT_ARGFLAG_DOC_HIDDEN))
			continue;
		printf("%c%c --%s %s\n", o->shortName ? '-' : ' ',
		       o->shortName ? o->shortName : '-',
		       o->longName ? o->longName : "-",
		       type == POPT_ARG_NONE || type == POPT_ARG_VAL ? "-" :
		       (o->argInfo & POPT_ARGFLAG_OPTIONAL) ? "optarg" : "arg");
	}
}

/*
 * "kmsg options CMD" prints one line per option of CMD: the short form
 * (or -), the long form (or -), and whether it takes an argument.  The
 * shell completions are checked against it, so they cannot drift.
 */
static int list_options(const char *name)
{
	for (const struct kmsg_cmd *c = kmsg_commands; c->name; c++) {
		if (strcmp(c->name, name))
			continue;
		list_table(c->options);
		return EXIT_OK;
	}
	cli_error(name, "no such command");
	return EXIT_USAGE;
}

int main(int argc, const char **argv)
{
	cli_init();
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			const char *sub[] = { argv[2], "--help", NULL };
			for (const struct kmsg_cmd *c = kmsg_commands; c->name; c++)
				if (!strcmp(c->name, argv[2]))
					return c->fn(2, sub);
			cli_error(argv[2], "no such command; see 'kmsg --help'");
			return EXIT_USAGE;
		}
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("kmsg %s\n", KMSG_VERSION_STRING);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "options") && argc == 3)
		return list_options(argv[2]);
	for (const struct kmsg_cmd *c = kmsg_commands; c->name; c++)
		if (!strcmp(c->name, argv[1]))
			return c->fn(argc - 1, argv + 1);
	cli_error(argv[1], "no such command; see 'kmsg --help'");
	return EXIT_USAGE;
}
