/*
 * internal.h - the file layout and the state shared by libkmsg's sources.
 * The overview of the ring (states, steps, ordering) is at the top of
 * ring.c; kmsg(5) describes the same layout for users.  Functions shared
 * between the sources carry the prefix kmsg__ (two underscores): the
 * static library puts them beside a program's own symbols, and the
 * public ones are kmsg_.
 */
#ifndef KMSG_INTERNAL_H
#define KMSG_INTERNAL_H

#include "kmsg.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
/* The file is little-endian and its words are used in place as atomics. */
#error "libkmsg supports little-endian hosts only"
#endif

/* ---- the header: 256 bytes at offset 0, a copy of bytes 0..127 at the end */

#define KMSG_MAGIC          "KMSGRNG\x1a"
#define KMSG_FORMAT_VERSION 1u
/* Incompatible features (header field incompat): a reader that lacks one
 * refuses the log with KMSG_EVERSION instead of misreading its records. */
#define INCOMPAT_BEGIN      0x1u  /* records may carry REC_BEGIN */
#define INCOMPAT_KNOWN      INCOMPAT_BEGIN
#define HDR_SIZE            256u
#define HDR_STATIC          128u  /* bytes 0..127: written once, checksummed */
#define HDR_CRC_OFF         124u

struct kmsg_hdr {
	/* static part, bytes 0..127 */
	char magic[8];              /*   0 */
	uint32_t version;           /*   8 */
	uint32_t header_size;       /*  12 */
	uint32_t incompat;          /*  16 features a reader must know */
	uint32_t compat;            /*  20 features it may ignore */
	uint64_t file_size;         /*  24 */
	uint64_t data_off;          /*  32 */
	uint64_t data_size;         /*  40 */
	uint32_t max_text;          /*  48 */
	uint32_t max_fields;        /*  52 */
	uint8_t ring_id[16];        /*  56 */
	int64_t created_ns;         /*  72 */
	uint64_t first_seq;         /*  80 sequence number of the very first record */
	uint8_t reserved0[36];      /*  88 */
	uint32_t header_crc;        /* 124 crc32c of bytes 0..123 */

	/* dynamic part, bytes 128..255: changed in place, validated on use */
	_Atomic uint64_t lock;      /* 128 id of the writer appending, 0 if none */
	_Atomic uint64_t head;      /* 136 position of the oldest stored record */
	_Atomic uint64_t tail;      /* 144 position after the newest: publication */
	_Atomic uint64_t next_seq;  /* 152 */
	_Atomic uint64_t clear_seq; /* 160 */
	_Atomic uint64_t writer_ids;/* 168 last writer id handed out */
	_Atomic uint64_t evicted;   /* 176 */
	_Atomic uint64_t damaged;   /* 184 */
	_Atomic uint32_t wake;      /* 192 futex word: bumped when followers wait */
	_Atomic uint32_t deferrals; /* 196 bumped when a writer stops waking
	                               for a while (ring.c, WAKING FOLLOWERS) */
	_Atomic uint64_t takeovers; /* 200 */
	_Atomic uint64_t boot_id;   /* 208 boot of the last writer that opened */
	/* The numbering's identity (see kmsg__log_numbering()): 0 in a log made
	 * before it existed, which then has the implicit one. */
	_Atomic uint64_t seq_id;    /* 216 stored last when renewed */
	_Atomic uint64_t seq_id_since;      /* 224 first number given under it */
	_Atomic uint64_t prev_seq_id;       /* 232 the identity before it, or 0 */
	_Atomic uint64_t prev_seq_id_since; /* 240 */
	_Atomic uint64_t prev2_seq_id;      /* 248 the one before that, or 0 */
};
_Static_assert(sizeof(struct kmsg_hdr) == HDR_SIZE, "header layout");

/* ---- records: 64-byte header, text, fields, zero padding to 8 ---------- */

#define REC_HDR    64u
#define REC_MAGIC  0x6b4du
#define REC_ALIGN  8u

/* Record flags in the file. */
#define REC_FRAGMENT 0x01u  /* the line continues in the caller's next record */
#define REC_BEGIN    0x02u  /* a new line: the caller's open one ends here */
#define REC_PAD      0x80u  /* fills the space to the end of the ring */
#define REC_FLAGS_KNOWN (REC_FRAGMENT | REC_BEGIN | REC_PAD)

struct rec_hdr {
	uint32_t len;        /*  0 whole record, a multiple of 8 */
	uint32_t crc;        /*  4 see rec_crc() */
	uint64_t seq;        /*  8 stored last: the commit */
	uint64_t pos;        /* 16 logical position the record was written at */
	int64_t real_ns;     /* 24 */
	int64_t boot_ns;     /* 32 */
	uint64_t boot_id;    /* 40 */
	uint32_t pid;        /* 48 */
	uint32_t caller;     /* 52 */
	uint16_t text_len;   /* 56 */
	uint16_t fields_len; /* 58 */
	uint8_t prio;        /* 60 facility << 3 | level */
	uint8_t flags;       /* 61 */
	uint16_t magic;      /* 62 REC_MAGIC */
};
_Static_assert(sizeof(struct rec_hdr) == REC_HDR, "record layout");

static inline uint64_t rec_size(size_t text_len, size_t fields_len)
{
	return (REC_HDR + text_len + fields_len + REC_ALIGN - 1) & ~(uint64_t)(REC_ALIGN - 1);
}

/*
 * The checksum of a record: crc32c over bytes 24 up to the end of the
 * padded payload (times, identity, lengths, text, fields, zero padding;
 * for a pad, the header only), then over seq, pos and len as three
 * little-endian 64-bit words.  That order lets a writer checksum the
 * record before it knows its sequence number and position, and finish in
 * three instructions under the lock; whole words keep the hardware path
 * free of byte steps.
 */
uint32_t kmsg__rec_crc_body(const void *rec, uint32_t end);
uint32_t kmsg__rec_crc_finish(uint32_t body_crc, uint64_t seq, uint64_t pos, uint32_t len);
/* kmsg__rec_crc_body of a record being copied: its header is already at dst,
 * the rest up to end is copied from src as it is summed. */
uint32_t kmsg__rec_crc_copy_body(unsigned char *dst, const unsigned char *src, uint32_t end);

/* Byte offsets beyond the file's end used for OFD locks (never data). */
#define LOCK_WRITER_BASE (UINT64_C(1) << 62)
#define LOCK_WRITER_MASK ((UINT64_C(1) << 40) - 1)
#define LOCK_FOLLOWER    (UINT64_C(1) << 61)

/* How often a writer looks for followers, and the reader's matching wait. */
#define FOLLOWER_PROBE_NS   (10 * 1000 * 1000)
/* How long a writer whose wake woke nobody only bumps the word. */
#define WAKE_QUIET_NS       (500 * 1000)

struct kmsg_log {
	int fd;
	unsigned flags;           /* KMSG_OPEN_* */
	unsigned char *map;
	uint64_t map_size;
	uint64_t opened_size;     /* the file's size when it was mapped */
	int private_hdr;          /* a reader's own copy of a damaged header */
	uint8_t ring_id[16];      /* the ring opened: the file may be written over */
	struct kmsg_hdr *hdr;
	unsigned char *data;
	uint64_t data_size;
	uint32_t max_text;
	uint64_t max_rec;         /* largest record the ring takes */
	uint64_t boot_id;
	uint32_t pid;

	/* writers */
	uint64_t writer_id;
	_Atomic unsigned fork_gen; /* fork generation the registration is of */
	/* A handle may be shared by threads: these two are atomics. */
	_Atomic int64_t next_probe_ns; /* when to look for followers again */
	_Atomic int followers;    /* a follower was seen at the last probe */
	_Atomic int64_t quiet_until_ns; /* CLOCK_BOOTTIME: no FUTEX_WAKE before */
	/* Data offsets of a recent tail and head position: pos % data_size
	 * is a division, and the lock holder needs two per append.  Read and
	 * written only under the ring lock (see ring_phys_near). */
	uint64_t tail_at, tail_phys, head_at, head_phys;
	int64_t lock_wait_ns;     /* the bound of a wait for a live writer */

	/* readers */
	int follower_registered;
	int64_t follower_since_ns;

	/* every open handle, for the fork child handler (log.c, FORK) */
	struct kmsg_log *next_handle, *prev_handle;
};

/* The numbering's identity and the two before it, read whole. */
struct numbering {
	uint64_t id, since, prev_id, prev_since, prev2_id;
};

/* log.c */
void kmsg__log_numbering(const struct kmsg_hdr *h, struct numbering *n);
/* The current identity alone: one load, for every record a reader returns. */
uint64_t kmsg__log_seq_id(const struct kmsg_hdr *h);
void kmsg__log_stat_numbering(struct kmsg_stat *st, const struct kmsg_hdr *h);
/* Opens the log on fd as kmsg_log_open() does; on success the log owns fd. */
int kmsg__log_open_fd(struct kmsg_log **out, int fd, unsigned flags);
int kmsg__log_register_writer(struct kmsg_log *log);
int kmsg__log_owner_alive(struct kmsg_log *log, uint64_t writer_id);
int kmsg__log_followers_present(struct kmsg_log *log);
int kmsg__log_register_follower(struct kmsg_log *log);
/* 0 once the handle is registered in this process (see FORK in log.c). */
int kmsg__log_writer_ready(struct kmsg_log *log);
uint32_t kmsg__log_tid(void);           /* gettid(), cached per thread */
int64_t kmsg__clock_ns(int clock);
int kmsg__fd_off_stdio(int fd);         /* never a log on fd 0, 1 or 2 */

/* reader.c */
/*
 * The oldest valid record: its position and number (at the end, the end
 * and the number the next record gets).  0, a negative code, or 1 if
 * writers overtook every try.
 */
int kmsg__ring_oldest(const struct kmsg_log *log, uint64_t *pos, uint64_t *seq);

/* record.c: the record codec */
/*
 * Checks the record at logical position pos as it lies in the mapping
 * (racing writers are the caller's business): returns its length if it is
 * a whole, valid record (or pad) written at pos, 0 otherwise.  If hd is
 * not NULL it gets the header the checks were made on: use that copy, not
 * the mapping, which a writer may change meanwhile.
 */
uint64_t kmsg__rec_check(const struct kmsg_log *log, uint64_t pos, struct rec_hdr *hd);
/* The header checks alone (no checksum), for a copy of the header at p:
 * the record's length if it is plausible, else 0. */
uint64_t kmsg__rec_header_at(const struct kmsg_log *log, uint64_t pos, uint64_t phys,
			     const unsigned char *p);
/* kmsg__rec_check for a record whose offset phys == pos % D the caller knows,
 * with its bytes (in the mapping or a copy) at p. */
uint64_t kmsg__rec_check_at(const struct kmsg_log *log, uint64_t pos, uint64_t phys,
			    const unsigned char *p, struct rec_hdr *hd);
/* A committed pad record at pos, numbered seq, filling room bytes. */
void kmsg__rec_pad(struct rec_hdr *pad, uint64_t pos, uint64_t seq, uint32_t room);
/* The checksum of the header's static part (bytes 0..123). */
uint32_t kmsg__hdr_crc(const void *hdr);

/* ring.c */
int kmsg__ring_lock(struct kmsg_log *log);
void kmsg__ring_unlock(struct kmsg_log *log);
void kmsg__ring_recover_locked(struct kmsg_log *log);
/*
 * pos % data_size from a remembered position *at and its offset *at_phys:
 * a 64-bit division costs more than the rest of a record's checks, and
 * writers (under the lock) and readers move forward through a lap, so the
 * remembered offset plus the distance is the answer until the lap ends.
 * Any position works; one behind or past the lap divides, and is then
 * remembered.
 */
static inline uint64_t ring_phys_near(const struct kmsg_log *log, uint64_t *at,
				      uint64_t *at_phys, uint64_t pos)
{
	if (pos >= *at && pos - *at < log->data_size - *at_phys)
		return *at_phys + (pos - *at);
	*at = pos;
	*at_phys = pos % log->data_size;
	return *at_phys;
}

/* Position after an implicit wrap: the end of a lap has no room for a header. */
static inline uint64_t ring_norm(const struct kmsg_log *log, uint64_t pos)
{
	uint64_t phys = pos % log->data_size;
	return log->data_size - phys < REC_HDR ? pos + (log->data_size - phys) : pos;
}

#endif
