/*
 * pager.c - read -H's pager, as dmesg runs one: PAGER or less, only when
 * standard output is a terminal (see pager.h).
 */
#define _GNU_SOURCE
#include "pager.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* 1 if the first word of cmd names a program that can be run. */
static int have_command(const char *cmd)
{
	char word[PATH_MAX], path[PATH_MAX];
	const char *dirs = getenv("PATH"), *end;
	size_t n = strcspn(cmd, " \t");

	if (n == 0 || n >= sizeof(word))
		return 0;
	memcpy(word, cmd, n);
	word[n] = '\0';
	if (strchr(word, '/'))
		return access(word, X_OK) == 0;
	if (dirs == NULL)
		dirs = "/usr/bin:/bin";
	for (; *dirs; dirs = *end ? end + 1 : end) {
		end = strchrnul(dirs, ':');
		if ((size_t)snprintf(path, sizeof(path), "%.*s/%s",
				     (int)(end - dirs), end == dirs ? "." : dirs,
				     word) >= sizeof(path))
			continue;
		if (access(path, X_OK) == 0)
			return 1;
	}
	return 0;
}

void pager_start(struct pager *p)
{
	const char *pager = getenv("PAGER");
	int fds[2];
	pid_t pid;

	if (!isatty(STDOUT_FILENO))
		return;
	if (pager == NULL)
		pager = "less";
	if (!*pager || !strcmp(pager, "cat") || !have_command(pager))
		return;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		signal(SIGPIPE, SIG_DFL); /* ours is ignored (cli_init) */
		/* less: quit if one screen, raw colours, no init (dmesg's) */
		setenv("LESS", "FRSX", 0);
		setenv("LV", "-c", 0);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		_exit(127);
	}
	p->saved_out = dup(STDOUT_FILENO);
	dup2(fds[1], STDOUT_FILENO);
	p->saved_err = -1;
	if (isatty(STDERR_FILENO)) {
		p->saved_err = dup(STDERR_FILENO);
		dup2(fds[1], STDERR_FILENO);
	}
	close(fds[0]);
	close(fds[1]);
	p->pid = pid;
	/* Ctrl-C is the pager's to handle; we finish writing and wait. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
}

void pager_end(struct pager *p)
{
	if (p->pid <= 0)
		return;
	if (p->saved_out >= 0) {
		dup2(p->saved_out, STDOUT_FILENO);
		close(p->saved_out);
		p->saved_out = -1;
	}
	if (p->saved_err >= 0) {
		dup2(p->saved_err, STDERR_FILENO);
		close(p->saved_err);
		p->saved_err = -1;
	}
	while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
		;
	p->pid = 0;
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
}
