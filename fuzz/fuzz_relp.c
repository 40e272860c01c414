/*
 * fuzz_relp.c - RELP's frames as a hostile server may send them: any
 * bytes read as a stream of frames (in memory of exactly their length, so
 * that ASan sees a read past it) with a small bound, every frame inside
 * the input and within the bound, every prefix of a whole frame asking for
 * more; each rsp's code and offers read; each frame written back and read
 * again to the same frame.
 */
#include <kmsg/kmsg.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define MAX 4096

static void frame_back(const struct kmsg_relp_frame *f)
{
	struct kmsg_relp_frame g;
	size_t used;
	int n = kmsg_relp_format(NULL, 0, f->txnr, f->command, f->data, f->data_len);
	char *buf;

	CHECK(n > 0);
	buf = malloc((size_t)n);
	CHECK(kmsg_relp_format(buf, (size_t)n, f->txnr, f->command, f->data, f->data_len) == n);
	CHECK(kmsg_relp_parse(&g, &used, buf, (size_t)n, MAX) == 1);
	CHECK(used == (size_t)n && g.txnr == f->txnr && g.data_len == f->data_len);
	CHECK(strcmp(g.command, f->command) == 0);
	CHECK(f->data_len == 0 || memcmp(g.data, f->data, f->data_len) == 0);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1);
	const char *p = copy;
	size_t left = size;

	memcpy(copy, data, size);
	for (;;) {
		struct kmsg_relp_frame f;
		size_t used = 0;
		int rc = kmsg_relp_parse(&f, &used, p, left, MAX);

		CHECK(rc == 0 || rc == 1 || rc == KMSG_ECORRUPT || rc == KMSG_ETOOLONG);
		if (rc != 1)
			break;
		CHECK(used > 0 && used <= left);
		CHECK(f.txnr <= KMSG_RELP_TXNR_MAX && f.data_len <= MAX);
		CHECK(f.command_len >= 1 && f.command_len <= KMSG_RELP_COMMAND_MAX);
		CHECK(strlen(f.command) == f.command_len);
		if (f.data)
			CHECK(f.data >= p && f.data + f.data_len < p + used);
		else
			CHECK(f.data_len == 0);
		for (size_t cut = used > 64 ? used - 64 : 0; cut < used; cut++) {
			struct kmsg_relp_frame g;
			size_t u2 = 12345;

			CHECK(kmsg_relp_parse(&g, &u2, p, cut, MAX) == 0 && u2 == 12345);
		}
		{
			const char *text, *cmd;
			size_t tl, cl;
			int code = kmsg_relp_rsp(&text, &tl, &cmd, &cl, f.data, f.data_len);

			CHECK(code == KMSG_ECORRUPT || (code >= 100 && code <= 999));
			if (code > 0) {
				CHECK(text >= f.data && text + tl <= f.data + f.data_len);
				CHECK(cmd >= f.data && cmd + cl <= f.data + f.data_len);
				(void)kmsg_relp_offer(cmd, cl, "commands", "syslog");
				(void)kmsg_relp_offer(cmd, cl, "relp_version", NULL);
			}
		}
		frame_back(&f);
		p += used;
		left -= used;
	}
	free(copy);
	return 0;
}
