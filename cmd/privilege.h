/*
 * privilege.h - whether kmsg runs with privileges that the user who
 * started it lacks (sudo, pkexec, a set-user-ID or set-group-ID file, file
 * capabilities).  Then it runs no program the environment names and reads
 * no file from that user's own directories: the pager is less from the
 * system's directories in its secure mode (pager.c), and only the system's
 * colour files apply (colors.c).
 */
#ifndef KMSG_PRIVILEGE_H
#define KMSG_PRIVILEGE_H

/*
 * 1 if the kernel marked this process's start secure (AT_SECURE: a
 * set-user-ID, set-group-ID or file-capability program), if the real and
 * effective user or group IDs differ, or if SUDO_UID, SUDO_USER or
 * PKEXEC_UID is set and not empty (sudo and pkexec set them; a root
 * shell opened with sudo keeps them); else 0.  Decided at the first call.
 */
int priv_elevated(void);

#endif
