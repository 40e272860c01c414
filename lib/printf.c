/*
 * printf.c - appends in the habits C programs bring from printf(3),
 * syslog(3) and sd_journal_send(3): text made from a format, and fields
 * given as "KEY=value" strings.  Both end in kmsg_log_append(), so they
 * are as thread-safe as it is and refuse what it refuses.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Text up to this long is formatted on the stack. */
#define STACK_TEXT 1024

int kmsg_log_vprintf(struct kmsg_log *log, int facility, int level,
		     const char *fmt, va_list ap)
{
	int saved = errno, rc, n;
	char stack[STACK_TEXT], *text = stack;
	size_t len;
	va_list again;

	if (!log || !fmt) {
		rc = KMSG_EINVAL;
		goto out;
	}
	va_copy(again, ap);
	n = vsnprintf(stack, sizeof(stack), fmt, ap);
	if (n < 0) {
		va_end(again);
		rc = KMSG_EINVAL;
		goto out;
	}
	len = (size_t)n;
	if (len >= sizeof(stack)) {
		/* one newline at the end may be dropped: only then too long */
		if (len > (size_t)log->max_text + 1) {
			va_end(again);
			rc = KMSG_ETOOLONG;
			goto out;
		}
		text = malloc(len + 1);
		if (!text) {
			va_end(again);
			rc = -ENOMEM;
			goto out;
		}
		errno = saved; /* for a %m of the second pass */
		n = vsnprintf(text, len + 1, fmt, again);
		if (n < 0 || (size_t)n != len) {
			va_end(again);
			rc = KMSG_EINVAL;
			goto out;
		}
	}
	va_end(again);
	if (len && text[len - 1] == '\n')
		len--;
	rc = kmsg_log_print(log, facility, level, text, len);
out:
	if (text != stack)
		free(text);
	errno = saved;
	return rc;
}

int kmsg_log_printf(struct kmsg_log *log, int facility, int level,
		    const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = kmsg_log_vprintf(log, facility, level, fmt, ap);
	va_end(ap);
	return rc;
}

/* Fields on the stack up to this many; more than the byte bound allows
 * of short fields take memory for the call. */
#define STACK_FIELDS 64

int kmsg_log_sendv(struct kmsg_log *log, int facility, int level,
		   const char *text, const char *const *fields, size_t n)
{
	int saved = errno, rc;
	struct kmsg_field stack[STACK_FIELDS], *f = stack;
	struct kmsg_entry e = KMSG_ENTRY_INIT;

	if (!log || !text || (!fields && n)) {
		rc = KMSG_EINVAL;
		goto out;
	}
	if (n > KMSG_MAX_FIELDS_BYTES) {
		/* each field takes at least a key byte and its own length */
		rc = KMSG_EFIELD;
		goto out;
	}
	if (n > STACK_FIELDS && !(f = malloc(n * sizeof(*f)))) {
		f = stack;
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const char *s = fields[i], *eq;

		if (!s) {
			rc = KMSG_EINVAL;
			goto out;
		}
		eq = strchr(s, '=');
		if (!eq || !kmsg_key_valid(s, (size_t)(eq - s))) {
			rc = KMSG_EFIELD;
			goto out;
		}
		f[i].key = s;
		f[i].key_len = (size_t)(eq - s);
		f[i].value = eq + 1;
		f[i].value_len = strlen(eq + 1);
	}
	e.facility = facility;
	e.level = level;
	e.text = text;
	e.text_len = strlen(text);
	e.fields = n ? f : NULL;
	e.nfields = n;
	rc = kmsg_log_append(NULL, log, &e);
out:
	if (f != stack)
		free(f);
	errno = saved;
	return rc;
}

int kmsg_log_send(struct kmsg_log *log, int facility, int level,
		  const char *text, ...)
{
	const char *stack[STACK_FIELDS], **fields = stack;
	size_t n = 0;
	va_list ap;
	int saved = errno, rc;

	va_start(ap, text);
	while (va_arg(ap, const char *) != NULL)
		n++;
	va_end(ap);
	if (n > STACK_FIELDS && !(fields = malloc(n * sizeof(*fields)))) {
		errno = saved;
		return -ENOMEM;
	}
	va_start(ap, text);
	for (size_t i = 0; i < n; i++)
		fields[i] = va_arg(ap, const char *);
	va_end(ap);
	rc = kmsg_log_sendv(log, facility, level, text, fields, n);
	if (fields != stack)
		free(fields);
	errno = saved;
	return rc;
}
