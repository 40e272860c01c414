/*
 * layout.h - the file as it lies on disk: the static header, the dynamic
 * words writers share, the auxiliary area, and the record header.  Only
 * definitions live here; the codec is record.c, the protocol ring.c (its
 * overview explains every field's role), and kmsg(5) gives users the same
 * tables.
 *
 *	[0, 128)            static header, written once, checksummed
 *	[128, 256)          dynamic words (format 2: two cache lines)
 *	[256, 256 + D)      the ring of records
 *	[256 + D, +4096)    auxiliary area (format 2 only)
 *	[size - 128, size)  a copy of the static header
 *
 * Format 1 (the first release) has no auxiliary area and other dynamic
 * words; its records are format-2 records in the committed state, which
 * is what lets a writer upgrade a format-1 log in place (file.c).
 */
#ifndef KMSG_LAYOUT_H
#define KMSG_LAYOUT_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
/* The file is little-endian and its words are used in place as atomics. */
#error "libkmsg supports little-endian hosts only"
#endif

#define KMSG_FORMAT_V1      1u
#define KMSG_FORMAT_VERSION 2u
/* Incompatible features (static field incompat): a reader that lacks one
 * refuses the log with KMSG_EVERSION instead of misreading its records. */
#define INCOMPAT_BEGIN      0x1u  /* records may carry REC_BEGIN */
#define INCOMPAT_KNOWN      INCOMPAT_BEGIN
#define HDR_SIZE            256u
#define HDR_STATIC          128u  /* bytes 0..127: written once, checksummed */
#define HDR_CRC_OFF         124u
#define BACKUP_SIZE         HDR_STATIC
#define AUX_SIZE            4096u /* format 2: between the ring and the backup */

/* ---- the static header (both formats) ----------------------------------- */

struct kmsg_static {
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
};
_Static_assert(sizeof(struct kmsg_static) == HDR_STATIC, "static header layout");

/* ---- format 2: the dynamic words (bytes 128..255) ----------------------- */

/*
 * Line A holds the first format's writer words, poisoned (file.c,
 * UPGRADE): a process of the first format that still has the log open
 * then fails its next append with KMSG_ESEQ, touching nothing but line
 * A.  Line B is written by every append (the reservation) and by
 * eviction, and holds nothing else.  The words every append reads but
 * rarely changes are in the auxiliary area, on a line of their own.
 */
struct kmsg_dyn {
	/* line A: 128..191, format 1's lock, head, tail, next_seq, ... */
	_Atomic uint64_t v1_lock;    /* 128 0: a format-1 writer takes it ... */
	_Atomic uint64_t v1_head;    /* 136 */
	_Atomic uint64_t v1_tail;    /* 144 UINT64_MAX */
	_Atomic uint64_t v1_next;    /* 152 UINT64_MAX: ... and fails at once */
	uint8_t line_a_rest[32];
	/* line B: 192..255 */
	_Atomic uint64_t resv_pos;   /* 192 end of the newest reservation  \ one  */
	_Atomic uint64_t resv_seq;   /* 200 its successor's number << 8     } 16-byte */
	                             /*     | the newest reserver's owner   / CAS   */
	_Atomic uint64_t head;       /* 208 oldest block not evicted       \ one  */
	_Atomic uint64_t head_seq;   /* 216 its number                      / pair */
	uint8_t line_b_rest[32];
};
_Static_assert(sizeof(struct kmsg_dyn) == HDR_SIZE - HDR_STATIC, "dynamic layout");

/* resv_seq packs the number (less first_seq) with the owner of the newest
 * reservation. */
#define RESV_OWNER_BITS 8
#define RESV_SEQ_MAX    ((UINT64_C(1) << (64 - RESV_OWNER_BITS)) - 1)

/* ---- format 2: the auxiliary area --------------------------------------- */

/* The numbering's identity (ring.c, THE NUMBERING'S IDENTITY). */
struct kmsg_ident {
	_Atomic uint64_t boot;       /* the boot it was made for */
	_Atomic uint64_t id;
	_Atomic uint64_t since;      /* first number given under it */
	_Atomic uint64_t prev_id;
	_Atomic uint64_t prev_since;
	_Atomic uint64_t prev2_id;
	uint64_t pad[2];
};

/* One quarantined stretch (ring.c, QUARANTINE). */
struct kmsg_quar {
	_Atomic uint64_t pos;        /* logical start when it was quarantined */
	_Atomic uint32_t len;
	_Atomic uint32_t blocks;     /* reservations in it */
	_Atomic uint64_t boot;       /* the boot of the writers it waits for */
	_Atomic uint16_t owner;      /* owner of its only reservation, or SHARED */
	_Atomic uint16_t spare;
	_Atomic uint32_t state;      /* QUAR_* */
};
#define QUAR_FREE    0u
#define QUAR_FILLING 1u  /* being written by the one that claimed it */
#define QUAR_ACTIVE  2u
#define NQUAR        64

struct kmsg_aux {
	/* line 0: followers */
	_Atomic uint32_t wake;       /*    0 futex word: bumped when followers wait */
	_Atomic uint32_t deferrals;  /*    4 bumped when a writer stops waking a while */
	uint8_t line0_rest[56];
	/* line 1: read by every append, rarely written */
	_Atomic uint64_t boot_id;    /*   64 the boot the dynamic state is of */
	_Atomic uint64_t pass_to;    /*   72 unmarked blocks below it are passed */
	_Atomic uint32_t qgen;       /*   80 bumped at each quarantine change */
	_Atomic uint32_t qactive;    /*   84 quarantine entries in use */
	_Atomic uint64_t clear_seq;  /*   88 */
	_Atomic uint64_t stall_pos;  /*   96 a block found unfinished, and */
	_Atomic int64_t stall_since; /*  104    since when (CLOCK_BOOTTIME) */
	_Atomic uint64_t id_slot;    /*  112 which identity slot is current */
	uint64_t line1_rest;
	/* line 2: counters */
	_Atomic uint64_t evicted;    /*  128 records evicted, ever */
	_Atomic uint64_t damaged;    /*  136 damaged records passed over, ever */
	_Atomic uint64_t holes;      /*  144 appends never completed (stopped, died) */
	_Atomic uint64_t writer_ids; /*  152 owner ids handed out, a hint */
	uint8_t line2_rest[32];
	struct kmsg_ident ident[2];  /*  192 */
	struct kmsg_quar quar[NQUAR];/*  320 */
	/* line 37: time order (ring.c), read by every append, rarely written */
	_Atomic int64_t wall_mark;   /* 2368 a wall time, less TIME_SLACK_NS; 0 unset */
	_Atomic uint64_t lowered;    /* 2376 times wall_mark was lowered */
	_Atomic uint64_t time_break; /* 2384 times may be out of order below it */
	uint8_t line37_rest[40];
	uint8_t rest[AUX_SIZE - 2432];
};
_Static_assert(sizeof(struct kmsg_aux) == AUX_SIZE, "aux layout");
_Static_assert(offsetof(struct kmsg_aux, wall_mark) == 2368, "aux layout");

/* ---- format 1: the dynamic words, for reading a format-1 log ------------ */

struct kmsg_dyn_v1 {
	_Atomic uint64_t lock;      /* 128 id of the writer appending, 0 if none */
	_Atomic uint64_t head;      /* 136 */
	_Atomic uint64_t tail;      /* 144 position after the newest: publication */
	_Atomic uint64_t next_seq;  /* 152 */
	_Atomic uint64_t clear_seq; /* 160 */
	_Atomic uint64_t writer_ids;/* 168 */
	_Atomic uint64_t evicted;   /* 176 */
	_Atomic uint64_t damaged;   /* 184 */
	_Atomic uint32_t wake;      /* 192 */
	_Atomic uint32_t deferrals; /* 196 */
	_Atomic uint64_t takeovers; /* 200 */
	_Atomic uint64_t boot_id;   /* 208 */
	_Atomic uint64_t seq_id;    /* 216 */
	_Atomic uint64_t seq_id_since;      /* 224 */
	_Atomic uint64_t prev_seq_id;       /* 232 */
	_Atomic uint64_t prev_seq_id_since; /* 240 */
	_Atomic uint64_t prev2_seq_id;      /* 248 */
};
_Static_assert(sizeof(struct kmsg_dyn_v1) == HDR_SIZE - HDR_STATIC, "v1 layout");

/* A whole format-1 header: what a dump is written with (dump.c). */
struct kmsg_hdr_v1 {
	struct kmsg_static s;
	struct kmsg_dyn_v1 d;
};

/* ---- records: 64-byte header, text, fields, zero padding to 8 ----------- */

#define REC_HDR    64u
#define REC_ALIGN  8u
#define REC_MAGIC  0x6b4du  /* format 1: bytes 62..63 */

/* Record flags. */
#define REC_FRAGMENT 0x01u  /* the line continues in the caller's next record */
#define REC_BEGIN    0x02u  /* a new line: the caller's open one ends here */
#define REC_PAD      0x80u  /* no record: the next block starts len bytes on */
#define REC_FLAGS_KNOWN (REC_FRAGMENT | REC_BEGIN | REC_PAD)

/*
 * The state of a block, in the low bits of its tag (the tag is the
 * block's own position, which is a multiple of 8; ring.c, BLOCK STATES).
 * A format-1 record is committed: its tag is its position.
 */
#define ST_COMMITTED 0u
#define ST_RESERVED  1u  /* header written, the rest on its way */
#define ST_HOLE      2u  /* given up by an evictor: the commit will fail */
#define ST_RELEASED  3u  /* given up, and its writer is done with it */
#define ST_MASK      7u

struct rec_hdr {
	uint32_t len : 24;   /*  0 whole block, a multiple of 8 */
	uint32_t prev_owner : 8; /* 3 the writer of the block before it (format 1: 0) */
	uint32_t crc;        /*  4 see kmsg__rec_crc_body() */
	uint64_t seq;        /*  8 */
	uint64_t tag;        /* 16 position | state: the commit word */
	int64_t real_ns;     /* 24 */
	int64_t boot_ns;     /* 32 */
	uint64_t boot_id;    /* 40 */
	uint32_t pid;        /* 48 */
	uint32_t caller;     /* 52 */
	uint16_t text_len;   /* 56 */
	uint16_t fields_len; /* 58 */
	uint8_t prio;        /* 60 facility << 3 | level */
	uint8_t flags;       /* 61 */
	uint8_t owner;       /* 62 the writer that reserved it (format 1: magic) */
	uint8_t spare;       /* 63 0 (format 1: the magic's other byte) */
};
_Static_assert(sizeof(struct rec_hdr) == REC_HDR, "record layout");

/* A block is shorter than this: its length shares a word with prev_owner. */
#define REC_LEN_MAX ((UINT32_C(1) << 24) - REC_ALIGN)

/*
 * A block's first word: its length and prev_owner.  The checksum covers it
 * whole; prev_owner is known only once the block is reserved, and the
 * checksum's last words come after that anyway (kmsg__rec_crc_finish()).
 */
static inline uint32_t rec_lenword(const struct rec_hdr *h)
{
	uint32_t w;

	__builtin_memcpy(&w, h, sizeof(w));
	return w;
}

/* Owner ids of writers (writer.c). */
#define OWNER_NONE    0u    /* nobody: the block's writer cannot be alive */
#define OWNER_SHARED  255u  /* a writer that could not register: assumed alive */
#define OWNER_MAX     254u

static inline uint64_t rec_size(uint64_t text_len, uint64_t fields_len)
{
	return (REC_HDR + text_len + fields_len + REC_ALIGN - 1) & ~(uint64_t)(REC_ALIGN - 1);
}

static inline uint64_t tag_pos(uint64_t tag)
{
	return tag & ~(uint64_t)ST_MASK;
}

static inline unsigned tag_state(uint64_t tag)
{
	return (unsigned)(tag & ST_MASK);
}

/* Byte offsets beyond the file's end used for OFD locks (never data). */
#define LOCK_WRITER_BASE  (UINT64_C(1) << 62)   /* format 1 writers */
#define LOCK_WRITER_MASK  ((UINT64_C(1) << 40) - 1)
#define LOCK_OWNER_BASE   (LOCK_WRITER_BASE + (UINT64_C(1) << 41))
#define LOCK_OWNER_SPAN   64u                   /* bytes per owner id */
#define LOCK_FOLLOWER     (UINT64_C(1) << 61)
#define LOCK_CREATING     (UINT64_C(1) << 60)  /* a creator's named temporary file */

/* Positions stay below this (the 64-bit space, with room to spare). */
#define POS_LIMIT (UINT64_C(1) << 62)

#endif
