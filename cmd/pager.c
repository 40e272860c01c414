/*
 * pager.c - read -H's pager, as dmesg runs one: PAGER or less, only when
 * standard output is a terminal (see pager.h).
 *
 * With privileges the user lacks (privilege.h: sudo kmsg read) a pager
 * the user picks would run with them, and less's own commands (!, |, v,
 * :e, LESSOPEN) run programs: dmesg and journalctl before CVE-2023-26604
 * gave a root shell so.  Then PAGER is not run (empty or "cat" still mean
 * none) and PATH is not searched: less comes from /usr/bin or /bin, with
 * LESSSECURE=1, LESS=FRSX whatever LESS said, no LESSOPEN, LESSCLOSE or
 * LESSSECURE_ALLOW, and no lesskey file of the user's; without such a
 * less, no pager.
 */
#define _GNU_SOURCE
#include "pager.h"
#include "privilege.h"

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

/* The less run with privileges: the system's, never one found on PATH. */
static const char *secure_less(void)
{
	static const char *const paths[] = { "/usr/bin/less", "/bin/less" };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (access(paths[i], X_OK) == 0)
			return paths[i];
	return NULL;
}

/*
 * In the pager's process, before less runs with privileges: its secure
 * mode, and nothing of the user's that names a program or a file.
 */
static void secure_less_env(void)
{
	static const char *const drop[] = {
		"LESSOPEN", "LESSCLOSE", "LESSSECURE_ALLOW", "LESSKEY_SYSTEM",
		"LESSKEYIN_SYSTEM", "LESSKEY_CONTENT", "LESSEDIT", "LESSHISTFILE",
	};

	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		unsetenv(drop[i]);
	setenv("LESSSECURE", "1", 1);
	setenv("LESS", "FRSX", 1);
	/* not ~/.lesskey nor $XDG_CONFIG_HOME/lesskey */
	setenv("LESSKEYIN", "/dev/null", 1);
	setenv("LESSKEY", "/dev/null", 1);
}

void pager_start(struct pager *p)
{
	const char *pager = getenv("PAGER"), *less = NULL;
	int secure = priv_elevated();
	int fds[2];
	pid_t pid;

	if (!isatty(STDOUT_FILENO))
		return;
	if (pager && (!*pager || !strcmp(pager, "cat")))
		return;
	if (secure) {
		less = secure_less();
		if (less == NULL)
			return;
	} else {
		if (pager == NULL)
			pager = "less";
		if (!have_command(pager))
			return;
	}
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
		if (secure) {
			secure_less_env();
			execl(less, "less", (char *)NULL);
			_exit(127);
		}
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
