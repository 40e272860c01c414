/*
 * test_printf.c - appends printf's way (kmsg_log_printf, kmsg_log_vprintf)
 * and with "KEY=value" strings (kmsg_log_send, kmsg_log_sendv).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static struct kmsg_log *log_;
static struct kmsg_reader *rd;

static void setup(void)
{
	log_ = tu_create("p.log", 256 * 1024, 4096);
	cr_assert_eq(kmsg_reader_new(&rd, log_, 0), 0);
}

static void teardown(void)
{
	kmsg_reader_free(rd);
	kmsg_log_close(log_);
	tu_cleanup();
}

TestSuite(printf, .init = setup, .fini = teardown);

static void next(struct kmsg_record *rec)
{
	cr_assert_eq(kmsg_reader_next(rd, rec), 1);
}

static void text_is(const struct kmsg_record *rec, const char *want, size_t n)
{
	cr_assert_eq(rec->text_len, n, "text of %zu bytes, not %zu", rec->text_len, n);
	cr_assert(memcmp(rec->text, want, n) == 0);
}

Test(printf, formats_and_drops_one_newline)
{
	struct kmsg_record rec;

	cr_assert_eq(kmsg_log_printf(log_, 3, 4, "disk %s at %d%%\n", "sda", 97), 0);
	next(&rec);
	text_is(&rec, "disk sda at 97%", 15);
	cr_assert_eq(rec.facility, 3);
	cr_assert_eq(rec.level, 4);
	cr_assert_eq(kmsg_log_printf(log_, 1, 6, "two\n\n"), 0);
	next(&rec);
	text_is(&rec, "two\n", 4);
	cr_assert_eq(kmsg_log_printf(log_, 1, 6, "%s", ""), 0);
	next(&rec);
	cr_assert_eq(rec.text_len, 0);
}

Test(printf, percent_m_and_errno_survive)
{
	struct kmsg_record rec;
	const char *want = strerror(ENOENT);

	errno = ENOENT;
	cr_assert_eq(kmsg_log_printf(log_, 1, 3, "open: %m"), 0);
	cr_assert_eq(errno, ENOENT);
	next(&rec);
	cr_assert_eq(rec.text_len, 6 + strlen(want));
	cr_assert(memcmp(rec.text + 6, want, strlen(want)) == 0);

	/* kept on failure too */
	errno = EAGAIN;
	cr_assert_eq(kmsg_log_printf(log_, 99, 3, "x"), KMSG_EPRIO);
	cr_assert_eq(errno, EAGAIN);
	errno = EBADF;
	cr_assert_eq(kmsg_log_send(log_, 1, 3, "x", "bad", NULL), KMSG_EFIELD);
	cr_assert_eq(errno, EBADF);
}

Test(printf, long_text_up_to_the_maximum)
{
	struct kmsg_record rec;
	char *big = malloc(5000);

	/* past the stack buffer, within max_text (4096): allocated, whole */
	memset(big, 'a', 3000);
	big[3000] = '\0';
	errno = ENOSPC;
	cr_assert_eq(kmsg_log_printf(log_, 1, 6, "%s %m", big), 0);
	cr_assert_eq(errno, ENOSPC);
	next(&rec);
	cr_assert_eq(rec.text_len, 3001 + strlen(strerror(ENOSPC)));
	cr_assert(memcmp(rec.text + 3001, strerror(ENOSPC), strlen(strerror(ENOSPC))) == 0);

	/* exactly the maximum, and the maximum with its newline */
	memset(big, 'b', 4096);
	big[4096] = '\0';
	cr_assert_eq(kmsg_log_printf(log_, 1, 6, "%s", big), 0);
	next(&rec);
	cr_assert_eq(rec.text_len, 4096);
	cr_assert_eq(kmsg_log_printf(log_, 1, 6, "%s\n", big), 0);
	next(&rec);
	cr_assert_eq(rec.text_len, 4096);

	/* one more: refused as kmsg_log_print refuses it, nothing written */
	big[4096] = 'b';
	big[4097] = '\0';
	cr_assert_eq(kmsg_log_printf(log_, 1, 6, "%s", big), KMSG_ETOOLONG);
	cr_assert_eq(kmsg_log_print(log_, 1, 6, big, 4097), KMSG_ETOOLONG);
	cr_assert_eq(kmsg_reader_next(rd, &rec), 0);
	free(big);
}

Test(printf, bad_arguments)
{
	cr_assert_eq(kmsg_log_printf(NULL, 1, 6, "x"), KMSG_EINVAL);
	cr_assert_eq(kmsg_log_printf(log_, 1, 8, "x"), KMSG_EPRIO);
	cr_assert_eq(kmsg_log_sendv(log_, 1, 6, NULL, NULL, 0), KMSG_EINVAL);
	cr_assert_eq(kmsg_log_sendv(log_, 1, 6, "x", NULL, 1), KMSG_EINVAL);
}

Test(printf, send_fields)
{
	struct kmsg_record rec;
	struct kmsg_field f;
	size_t pos = 0;

	cr_assert_eq(kmsg_log_send(log_, 2, 5, "disk full", "DEVICE=sda", "UNIT=a=b",
				   "EMPTY=", NULL), 0);
	next(&rec);
	text_is(&rec, "disk full", 9);
	cr_assert_eq(rec.facility, 2);
	cr_assert_eq(kmsg_field_next(&f, &rec, &pos), 1);
	cr_assert_eq(f.key_len, 6);
	cr_assert(memcmp(f.key, "DEVICE", 6) == 0);
	cr_assert_eq(f.value_len, 3);
	cr_assert(memcmp(f.value, "sda", 3) == 0);
	cr_assert_eq(kmsg_field_next(&f, &rec, &pos), 1);
	cr_assert(memcmp(f.key, "UNIT", 4) == 0);
	cr_assert_eq(f.value_len, 3);
	cr_assert(memcmp(f.value, "a=b", 3) == 0);
	cr_assert_eq(kmsg_field_next(&f, &rec, &pos), 1);
	cr_assert_eq(f.value_len, 0);
	cr_assert_eq(kmsg_field_next(&f, &rec, &pos), 0);

	cr_assert_eq(kmsg_log_send(log_, 1, 6, "no fields", NULL), 0);
	next(&rec);
	cr_assert_eq(rec.fields_len, 0);
}

Test(printf, send_refuses_bad_fields)
{
	static const char *const many[70] = { [0 ... 69] = "K=v" };
	const char *bad[] = { "NOEQUALS", "lower=x", "_PID=1", "=x", "1KEY=x" };
	struct kmsg_record rec;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(kmsg_log_sendv(log_, 1, 6, "x", &bad[i], 1), KMSG_EFIELD, "%s", bad[i]);
	cr_assert_eq(kmsg_reader_next(rd, &rec), 0);

	/* more fields than the stack holds */
	cr_assert_eq(kmsg_log_sendv(log_, 1, 6, "many", many, 70), 0);
	next(&rec);
	cr_assert_eq(rec.fields_len > 0, 1);
}
