/* version.c - the version of the library a program runs with. */
#include <kmsg/kmsg.h>

const char *kmsg_version(void)
{
	return KMSG_VERSION_STRING;
}
