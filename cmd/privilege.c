/*
 * privilege.c - whether kmsg runs with privileges its user lacks (see
 * privilege.h).
 */
#define _GNU_SOURCE
#include "privilege.h"

#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

static int set(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0';
}

int priv_elevated(void)
{
	static int elevated = -1;

	if (elevated < 0)
		elevated = getauxval(AT_SECURE) != 0 || getuid() != geteuid() ||
			   getgid() != getegid() || set("SUDO_UID") ||
			   set("SUDO_USER") || set("PKEXEC_UID");
	return elevated;
}
