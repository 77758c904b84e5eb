/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside the native kernel-record translator (ingest.h): the facts of the record being written,
 * the pass's context, the bounds-checked writes into linear memory every part uses, and the parts
 * themselves, split as host/sources/syscall/ingest/ is (libsinsp's filterchecks by field class):
 *   ingest.c        the pass over a batch, a record's facts, the dispatch of each slot's field
 *   ingest-path.c   fd.name and the path parameters (joined with their directory, normalized)
 *   ingest-evt.c    evt.*: number, result, time, constants, open kind, I/O buffer
 *   ingest-arg.c    evt.arg.*: the syscall's parameters as libsinsp prints them
 *   ingest-fd.c     fd.*: descriptor, type, socket ends and their DNS names
 *   ingest-proc.c   proc.duration, proc.env[NAME], thread.tid, container.duration
 * Nothing here allocates; every write into linear memory goes through alloc() or a slot.
 */
#ifndef RAE_INGEST_INTERNAL_H
#define RAE_INGEST_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "ingest.h"
#include "../src/events.h"

#define AF_UNIX_ 1
#define AF_INET_ 2
#define AF_INET6_ 10
#define AF_NETLINK_ 16

struct facts {
	const uint8_t *rec;
	uint32_t len;
	int64_t ret;
	uint32_t cls;
	uint32_t flags;
	const uint8_t *name; /* fd.name bytes (in the record or already in memory) */
	uint32_t name_len;
	uint32_t name_addr;  /* address in memory once copied, 0 = not yet */
	uint32_t raw_addr;   /* the path as passed, once copied */
	int has_name;
	int joined;          /* fd.name is the directory joined with the path (not the path itself) */
	int32_t slash;       /* offset of fd.name's last '/' (-1: none), found once for fd.directory and fd.filename; -2 = not looked for */
	const uint8_t *client, *server, *local, *peer; /* an absent end (family 0) when the socket has no such end */
	int serv_sock;       /* a bound socket (RAE_NRC_BIND/LISTEN): server = the local end, no other end */
	uint16_t fam;
	uint32_t thread;     /* the event's thread entry address, 0 = unknown */
};

struct ctx {
	const struct rae_ingest_io *io;
	uint64_t heap, heap_end, konst;
	uint64_t epoch; /* boot ns -> epoch ns */
	int64_t evt_num; /* evt.num of the record being written */
	/* the last rendered open flags (consecutive opens mostly share them) */
	uint32_t flags_value, flags_addr, flags_len;
	/* the argument of the keyed field being written (proc.env[NAME]'s NAME) */
	const uint8_t *key;
	uint32_t key_len;
};

static inline uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void wr64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/*
 * Numbers as text, as printf's "%llu", "%lld" and "%#o" print them, into s (room for 21 bytes,
 * 12 for a 32-bit value); each returns the length. Not snprintf: parsing its format was about a
 * tenth of the translation of an open record with every rule set (several numeric evt.arg.*
 * fields a record).
 */
static inline int fmt_udec(char *s, uint64_t u)
{
	char b[20];
	int n = 0, k = 0;
	do {
		b[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	while (n)
		s[k++] = b[--n];
	return k;
}

static inline int fmt_dec(char *s, int64_t v)
{
	if (v >= 0)
		return fmt_udec(s, (uint64_t)v);
	s[0] = '-';
	return 1 + fmt_udec(s + 1, 0 - (uint64_t)v);
}

static inline int fmt_oct_alt(char *s, uint32_t v)
{
	char b[11];
	int n = 0, k = 0;
	s[k++] = '0'; /* "%#o": a leading 0, which is the whole text of 0 */
	for (; v; v >>= 3)
		b[n++] = (char)('0' + (v & 7));
	while (n)
		s[k++] = b[--n];
	return k;
}

static inline uint32_t alloc(struct ctx *c, uint32_t n)
{
	uint64_t at = c->heap;
	if (at + n > c->heap_end)
		return 0;
	/* the next allocation is 8-aligned, but never past the end: an unaligned end would otherwise
	 * leave heap > heap_end in the state, which the next call refuses as a bad state */
	uint64_t next = (at + n + 7) & ~7ull;
	c->heap = next < c->heap_end ? next : c->heap_end;
	return (uint32_t)at;
}

static inline int ref(uint8_t *to, uint32_t addr, uint32_t len)
{
	wr32(to, addr);
	wr32(to + 4, len);
	return 1;
}

static inline int num(uint8_t *to, int64_t v)
{
	wr64(to, (uint64_t)v);
	return 1;
}

static inline int copy(struct ctx *c, const uint8_t *from, uint32_t len, uint8_t *to)
{
	uint32_t at = alloc(c, len);
	if (!at)
		return 0;
	memcpy(c->io->mem + at, from, len);
	return ref(to, at, len);
}

/* Constant string `id` (RAE_K_*) of the blob; none when its length is 0. */
static inline int konst(struct ctx *c, int id, uint8_t *to)
{
	const int32_t *k = c->io->plan + RAE_IP_CONST + 2 * id;
	if (k[1] <= 0)
		return 0;
	return ref(to, (uint32_t)(c->konst + (uint32_t)k[0]), (uint32_t)k[1]);
}

/* The event's thread entry in the module's memory, or NULL when facts.thread is not an entry's address. */
static inline const uint8_t *thread_entry(const struct ctx *c, const struct facts *f)
{
	if (f->thread < RAE_STATE_THREADS || (f->thread - RAE_STATE_THREADS) % RAE_THREAD_SIZE)
		return NULL;
	return c->io->mem + f->thread;
}

static inline int text(struct ctx *c, const char *s, int n, uint8_t *to)
{
	return n > 0 && copy(c, (const uint8_t *)s, (uint32_t)n, to);
}

/*
 * The parts are internal to the addon: hidden, so that the link-time optimizer may treat them as
 * the addon's own and inline each field class's writer into the pass (ingest.c value()); exported,
 * they could be interposed and stay calls.
 */
#pragma GCC visibility push(hidden)

/* ingest-path.c */
int rae_fd_name(struct ctx *c, struct facts *f, uint8_t *to);
int rae_raw_path(struct ctx *c, struct facts *f, uint8_t *to);
int rae_new_path(struct ctx *c, struct facts *f, uint8_t *to);
int rae_needs_normalize(const uint8_t *s, uint32_t len);
uint32_t rae_normalize(const uint8_t *s, uint32_t len, uint8_t *d);
/* ingest-arg.c: the field of each RAE_NRC_PATHARG kind; the mode parameter of a class word */
extern const int rae_path_field[8];
uint32_t rae_mode_arg(const struct facts *f, uint32_t w);

/*
 * The writers of each field class: the 8 bytes of `field` at `to` from the record's facts;
 * 0 when the record does not provide it.
 */
int rae_evt_value(struct ctx *c, struct facts *f, int field, uint8_t *to);
int rae_arg_value(struct ctx *c, struct facts *f, int field, uint8_t *to);
int rae_fd_value(struct ctx *c, struct facts *f, int field, uint8_t *to);
int rae_proc_value(struct ctx *c, struct facts *f, int field, uint8_t *to);

#pragma GCC visibility pop

#endif
