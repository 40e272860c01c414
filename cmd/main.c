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
	{ "ship",   cmd_ship,   "forward the log's records to a syslog collector", ship_options },
	{ "clear",  cmd_clear,  "mark everything so far as cleared (dmesg -C)", clear_options },
	{ "dump",   cmd_dump,   "write a compressed snapshot readable offline", dump_options },
	{ "stat",   cmd_stat,   "show the state of a log: size, records, losses", stat_options },
	{ "listen", cmd_listen, "take syslog messages from a socket (/dev/log) into the log",
	  listen_options },
	{ "kernel", cmd_kernel, "copy the kernel's log (/dev/kmsg) into the log, as klogd did",
	  kernel_options },
	{ NULL, NULL, NULL, NULL }
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: kmsg <command> [options]\n\nCommands:\n");
	for (const struct kmsg_cmd *c = kmsg_commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->summary);
	fprintf(f, "  %-8s %s\n", "help", "help COMMAND: that command's options, as --help");
	fprintf(f, "  %-8s %s\n", "options", "options COMMAND: its options, one per line "
		   "(for shell completions)");
	fprintf(f, "\n'kmsg <command> --help' lists a command's options; "
		   "kmsg(1) has the whole manual.\n");
}

/*
 * Runs subcommand c with the rest of the command line, argv[0] named
 * "kmsg <command>" so that its usage and help say how it was called.
 */
static int run(const struct kmsg_cmd *c, int argc, const char **argv)
{
	char name[32];
	const char **v = calloc((size_t)argc + 1, sizeof(*v));
	int status;

	if (v == NULL)
		return cli_error(NULL, "out of memory");
	snprintf(name, sizeof(name), "kmsg %s", c->name);
	v[0] = name;
	for (int i = 1; i < argc; i++)
		v[i] = argv[i];
	status = c->fn(argc, v);
	free(v);
	return status;
}

static const struct kmsg_cmd *find(const char *name)
{
	for (const struct kmsg_cmd *c = kmsg_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
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
static int list_options(int argc, const char **argv)
{
	const struct kmsg_cmd *c;

	if (argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
		printf("Usage: kmsg options COMMAND\n\nPrints one line per option of "
		       "COMMAND: its short form (or -), long form (or ---), and -, arg "
		       "or optarg.\n");
		return EXIT_OK;
	}
	if (argc != 3 || argv[2][0] == '-') {
		cli_error("options", "takes one command: kmsg options COMMAND (see 'kmsg --help')");
		return EXIT_USAGE;
	}
	c = find(argv[2]);
	if (c == NULL && (!strcmp(argv[2], "help") || !strcmp(argv[2], "options"))) {
		cli_error(argv[2], "has no options: it takes a command name");
		return EXIT_USAGE;
	}
	if (c == NULL) {
		cli_error(argv[2], "no such command; see 'kmsg --help'");
		return EXIT_USAGE;
	}
	list_table(c->options);
	return EXIT_OK;
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
			const struct kmsg_cmd *c = find(argv[2]);
			if (c)
				return run(c, 2, sub);
			if (!strcmp(argv[2], "help") || !strcmp(argv[2], "options") ||
			    !strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")) {
				usage(stdout);
				return EXIT_OK;
			}
			cli_error(argv[2], "no such command; see 'kmsg --help'");
			return EXIT_USAGE;
		}
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("kmsg %s\n", kmsg_version());
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "options"))
		return list_options(argc, argv);
	if (find(argv[1]))
		return run(find(argv[1]), argc - 1, argv + 1);
	cli_error(argv[1], "no such command; see 'kmsg --help'");
	return EXIT_USAGE;
}
