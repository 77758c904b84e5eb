// SPDX-License-Identifier: Apache-2.0
/*
 * Native kernel-record translator (see ingest.h): one pass over a batch of wire records writing
 * one eval record per SYSCALL record, with the exact semantics of ingest.ts's TypeScript oracle
 * (open flags per syscall, fd.name joined with the record's directory, endpoints by side, errno
 * names, IPv4 tuple names, the evt.arg.* parameters by syscall class (pid/dirfd/res/linkpath too), proc.env[NAME] from the
 * thread entry's environment (env-index.ts layout); setuid records stop the pass
 * when evt.arg.uid is read, the host names users; with RAE_IS_LOOKUP a record of a process without a thread entry stops it
 * until the host has read that process). Strings are copied into the batch's string area; nothing is
 * allocated. Every write into linear memory is bounds-checked against the plan's regions.
 */
#include <stdio.h>
#include <string.h>

#include "ingest.h"
#include "../src/events.h"
#include "../src/syscalls.h"

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
	const uint8_t *client, *server, *local, *peer; /* NO_END when the socket has no such end */
	int serv_sock;       /* a bound socket (RAE_NRC_BIND/LISTEN): server = the local end, no other end */
	uint16_t fam;
	uint32_t thread;     /* the event's thread entry address, 0 = unknown */
};

struct ctx {
	const struct rae_ingest_io *io;
	uint64_t heap, heap_end, konst;
	uint64_t epoch; /* boot ns -> epoch ns */
	/* the last rendered open flags (consecutive opens mostly share them) */
	uint32_t flags_value, flags_addr, flags_len;
	/* the argument of the keyed field being written (proc.env[NAME]'s NAME) */
	const uint8_t *key;
	uint32_t key_len;
};

/* An absent socket end (family 0): ip() and port() find nothing in it. */
static const uint8_t NO_END[sizeof(struct rae_sockaddr)];

static inline uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void wr64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static uint32_t alloc(struct ctx *c, uint32_t n)
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

static int ref(uint8_t *to, uint32_t addr, uint32_t len)
{
	wr32(to, addr);
	wr32(to + 4, len);
	return 1;
}

static int num(uint8_t *to, int64_t v)
{
	wr64(to, (uint64_t)v);
	return 1;
}

static int copy(struct ctx *c, const uint8_t *from, uint32_t len, uint8_t *to)
{
	uint32_t at = alloc(c, len);
	if (!at)
		return 0;
	memcpy(c->io->mem + at, from, len);
	return ref(to, at, len);
}

static int konst(struct ctx *c, int id, uint8_t *to)
{
	const int32_t *k = c->io->plan + RAE_IP_CONST + 2 * id;
	if (k[1] <= 0)
		return 0;
	return ref(to, (uint32_t)(c->konst + (uint32_t)k[0]), (uint32_t)k[1]);
}

static int fd_name(struct ctx *c, struct facts *f, uint8_t *to)
{
	if (!f->has_name)
		return 0;
	if (!f->name_addr && !f->joined && f->raw_addr)
		f->name_addr = f->raw_addr; /* the same bytes */
	if (!f->name_addr) {
		uint32_t at = alloc(c, f->name_len);
		if (!at)
			return 0;
		memcpy(c->io->mem + at, f->name, f->name_len);
		f->name_addr = at;
	}
	return ref(to, f->name_addr, f->name_len);
}

static int ip(struct ctx *c, const uint8_t *sa, uint8_t *to)
{
	uint16_t fam = rd16(sa + offsetof(struct rae_sockaddr, family));
	uint32_t n = fam == AF_INET_ ? 4 : fam == AF_INET6_ ? 16 : 0;
	return n && copy(c, sa + offsetof(struct rae_sockaddr, addr), n, to);
}

/*
 * An IP end's domain name: a binary search of the DNS table in the module's state region
 * (eval_abi.h RAE_STATE_DNS, written by host/sources/dns/table.ts; ingest.ts endpointName), whose
 * entries are sorted by (address length, address bytes). The name's bytes stay in the table.
 */
static int dns_name(struct ctx *c, const uint8_t *sa, uint8_t *to)
{
	uint16_t fam = rd16(sa + offsetof(struct rae_sockaddr, family));
	uint32_t alen = fam == AF_INET_ ? 4 : fam == AF_INET6_ ? 16 : 0;
	if (!alen || (size_t)RAE_STATE_DNS + RAE_DNS_SIZE > c->io->mem_len)
		return 0;
	const uint8_t *t = c->io->mem + RAE_STATE_DNS;
	uint8_t key[16] = { 0 };
	memcpy(key, sa + offsetof(struct rae_sockaddr, addr), alen);
	uint32_t lo = 0, hi = rd32(t + RAE_DNS_COUNT);
	if (hi > RAE_DNS_SLOTS)
		hi = RAE_DNS_SLOTS;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const uint8_t *e = t + RAE_DNS_ENTRIES + (size_t)mid * RAE_DNS_ENTRY_SIZE;
		uint32_t elen = rd32(e + RAE_DNS_ALEN);
		int cmp = elen != alen ? (elen < alen ? -1 : 1) : memcmp(e, key, 16);
		if (cmp == 0) {
			uint32_t at = rd32(e + RAE_DNS_NAME), len = rd32(e + RAE_DNS_NAME + 4);
			return (uint64_t)at + len <= c->io->mem_len && ref(to, at, len);
		}
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int port(const uint8_t *sa, uint8_t *to)
{
	uint16_t fam = rd16(sa + offsetof(struct rae_sockaddr, family));
	return (fam == AF_INET_ || fam == AF_INET6_) && num(to, rd16(sa + offsetof(struct rae_sockaddr, port)));
}

/* One end "addr:port" as decode.ts renders it: IPv6 as RFC 5952 text (::ffff:a.b.c.d when mapped), an absent end 0.0.0.0. */
static int endpoint(char *s, size_t room, const uint8_t *sa)
{
	const uint8_t *a = sa + offsetof(struct rae_sockaddr, addr);
	unsigned port = rd16(sa + offsetof(struct rae_sockaddr, port));
	if (rd16(sa) != AF_INET6_)
		return rd16(sa) == AF_INET_ ? snprintf(s, room, "%u.%u.%u.%u:%u", a[0], a[1], a[2], a[3], port) : snprintf(s, room, "0.0.0.0:%u", port);
	unsigned w[8];
	for (int i = 0; i < 8; i++)
		w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
	if (!w[0] && !w[1] && !w[2] && !w[3] && !w[4] && w[5] == 0xffff)
		return snprintf(s, room, "::ffff:%u.%u.%u.%u:%u", a[12], a[13], a[14], a[15], port);
	int best = -1, best_len = 0;
	for (int i = 0; i < 8;) {
		if (w[i]) { i++; continue; }
		int j = i;
		while (j < 8 && !w[j])
			j++;
		if (j - i > best_len && j - i >= 2) { best = i; best_len = j - i; }
		i = j;
	}
	int n = 0;
	for (int i = 0; i < 8; i++) {
		if (i == best) {
			n += snprintf(s + n, room - (size_t)n, "::");
			i += best_len - 1;
			continue;
		}
		n += snprintf(s + n, room - (size_t)n, "%s%x", i > 0 && i != best + best_len ? ":" : "", w[i]);
	}
	return n + snprintf(s + n, room - (size_t)n, ":%u", port);
}

/* "client->server" of an IP socket (fd.name), each end as endpoint() renders it. */
static int tuple_name(struct ctx *c, struct facts *f, uint8_t *to)
{
	char s[128];
	if (f->serv_sock) /* a server socket: its bound end alone (fields.ts endpointText) */
		return copy(c, (const uint8_t *)s, (uint32_t)endpoint(s, 60, f->server), to);
	int n = endpoint(s, 60, f->client);
	n += snprintf(s + n, 3, "->");
	n += endpoint(s + n, 60, f->server);
	return n > 0 && copy(c, (const uint8_t *)s, (uint32_t)n, to);
}

/* Open flags as libsinsp prints them: the access mode, then each set flag, joined by '|'. */
static int open_flags(struct ctx *c, uint32_t flags, uint8_t *to)
{
	if (c->flags_addr && c->flags_value == flags)
		return ref(to, c->flags_addr, c->flags_len);
	const int32_t *plan = c->io->plan;
	int ids[1 + RAE_OFLAG_COUNT], n = 0;
	uint32_t acc = flags & 3, len = 0;
	ids[n++] = RAE_K_OACC + (acc == 0 ? 0 : acc == 1 ? 1 : 2);
	for (int i = 0; i < RAE_OFLAG_COUNT; i++)
		if (flags & (uint32_t)plan[RAE_IP_OFLAGS + i])
			ids[n++] = RAE_K_OFLAG + i;
	for (int i = 0; i < n; i++)
		len += (uint32_t)plan[RAE_IP_CONST + 2 * ids[i] + 1] + (i > 0);
	uint32_t at = alloc(c, len);
	if (!at)
		return 0;
	uint8_t *m = c->io->mem + at;
	for (int i = 0; i < n; i++) {
		const int32_t *k = plan + RAE_IP_CONST + 2 * ids[i];
		if (i > 0)
			*m++ = '|';
		memcpy(m, c->io->mem + c->konst + (uint32_t)k[0], (uint32_t)k[1]);
		m += k[1];
	}
	c->flags_value = flags;
	c->flags_addr = at;
	c->flags_len = len;
	return ref(to, at, len);
}

/* The first path as passed (evt.arg.target, fd.nameraw of an open, unresolved path parameters). */
static int raw_path(struct ctx *c, struct facts *f, uint8_t *to)
{
	uint16_t po = rd16(f->rec + offsetof(struct rae_syscall, path));
	uint16_t pl = rd16(f->rec + offsetof(struct rae_syscall, path) + 2);
	if (po == 0 || (uint32_t)po + pl >= f->len)
		return 0;
	if (!f->raw_addr && f->has_name && !f->joined && f->name_addr)
		f->raw_addr = f->name_addr; /* the same bytes */
	if (!f->raw_addr) {
		uint32_t at = alloc(c, pl);
		if (!at)
			return 0;
		memcpy(c->io->mem + at, f->rec + po, pl);
		f->raw_addr = at;
	}
	return ref(to, f->raw_addr, pl);
}

static int text(struct ctx *c, const char *s, int n, uint8_t *to)
{
	return n > 0 && copy(c, (const uint8_t *)s, (uint32_t)n, to);
}

/* evt.arg.flags of unlinkat/linkat (render.ts atFlags): the AT_* names of the set bits, else the number. */
static int at_flags(struct ctx *c, uint32_t flags, uint8_t *to)
{
	static const struct { uint32_t bit; const char *name; } AT[] = { { 0x200, "AT_REMOVEDIR" }, { 0x400, "AT_SYMLINK_FOLLOW" }, { 0x1000, "AT_EMPTY_PATH" } };
	char s[64];
	int n = 0;
	for (int i = 0; i < 3; i++)
		if (flags & AT[i].bit)
			n += snprintf(s + n, sizeof(s) - (size_t)n, "%s%s", n ? "|" : "", AT[i].name);
	if (n == 0)
		n = snprintf(s, sizeof(s), "%u", flags);
	return text(c, s, n, to);
}

static uint32_t normalize(const uint8_t *s, uint32_t len, uint8_t *d);
static int needs_normalize(const uint8_t *s, uint32_t len);

/* evt.arg.newpath: the second path, a relative one joined with dir2 and normalized (libsinsp PT_FSPATH). */
static int new_path(struct ctx *c, struct facts *f, uint8_t *to)
{
	const uint8_t *rec = f->rec;
	uint16_t po = rd16(rec + offsetof(struct rae_syscall, path2)), pl = rd16(rec + offsetof(struct rae_syscall, path2) + 2);
	uint16_t d0 = rd16(rec + offsetof(struct rae_syscall, dir2)), dl = rd16(rec + offsetof(struct rae_syscall, dir2) + 2);
	if (po == 0 || (uint32_t)po + pl >= f->len)
		return 0;
	if ((uint32_t)d0 + dl >= f->len)
		d0 = dl = 0;
	if (pl == 0 || rec[po] == '/' || d0 == 0)
		return copy(c, rec + po, pl, to);
	uint32_t slash = dl > 0 && rec[d0 + dl - 1] == '/' ? 0 : 1, n = dl + slash + pl;
	uint32_t at = alloc(c, n);
	if (!at)
		return 0;
	uint8_t *m = c->io->mem + at;
	memcpy(m, rec + d0, dl);
	if (slash)
		m[dl] = '/';
	memcpy(m + dl + slash, rec + po, pl);
	if (m[0] == '/' && needs_normalize(m, n)) {
		uint32_t nat = alloc(c, n);
		if (!nat)
			return 0;
		n = normalize(m, n, c->io->mem + nat);
		at = nat;
	}
	return ref(to, at, n);
}

/* The mode parameter of class word w (RAE_NRC_MODE_SHIFT: args[w - 1], 7 = openat2's aux[1]). */
static uint32_t mode_arg(const struct facts *f, uint32_t w)
{
	return w == 7 ? (uint32_t)rd64(f->rec + offsetof(struct rae_syscall, aux) + 8) : (uint32_t)rd64(f->rec + offsetof(struct rae_syscall, args) + 8 * (w - 1));
}

/* evt.arg.mode (render.ts chmodMode / openMode / hexMode). */
static int mode_text(struct ctx *c, struct facts *f, uint8_t *to)
{
	uint32_t w = (f->cls >> RAE_NRC_MODE_SHIFT) & 7, fmt = (f->cls >> RAE_NRC_MODEFMT_SHIFT) & 3;
	if (!w || !fmt)
		return 0;
	uint32_t v = mode_arg(f, w);
	char s[256];
	int n = 0;
	if (fmt == 1) {
		v &= 07777;
		for (int i = 0; i < 12; i++) {
			if (!(v & (1u << i)))
				continue;
			const int32_t *k = c->io->plan + RAE_IP_CONST + 2 * (RAE_K_MODE + i);
			if (k[1] <= 0 || n + 1 + k[1] > (int)sizeof(s))
				return 0;
			if (n > 0)
				s[n++] = '|';
			memcpy(s + n, c->io->mem + c->konst + (uint32_t)k[0], (uint32_t)k[1]);
			n += k[1];
		}
		if (n == 0)
			s[n++] = '0';
	} else if (fmt == 2) {
		v = (f->flags & (0100 | 020000000)) ? v & 07777 : 0;
		n = snprintf(s, sizeof(s), "%#o", v);
	} else {
		n = snprintf(s, sizeof(s), "%X", v);
	}
	return text(c, s, n, to);
}

/* evt.arg.fd without an fd table (render.ts fdText): the number, AT_FDCWD, or a negative value's errno name. */
static int fd_text(struct ctx *c, int64_t fd, uint8_t *to)
{
	char s[24];
	if (fd == -100)
		return text(c, "AT_FDCWD", 8, to);
	if (fd < 0 && fd > -RAE_K_ERRNO_END && konst(c, (int)-fd, to))
		return 1;
	return text(c, s, snprintf(s, sizeof(s), "%lld", (long long)fd), to);
}

/*
 * proc.env[NAME] (env-index.ts envValue; libsinsp sinsp_threadinfo::get_env(name), read by
 * sinsp_filtercheck_thread.cpp TYPE_ENV for the process itself, no ancestor): the first variable
 * longer than "NAME=" that starts with it, its value stripped of blanks at both ends; "" when the
 * process has no such variable; missing when the process or its environment is unknown. The
 * thread entry's env ref is the blank-joined text, followed (2-aligned) by a u16 count and the
 * u16 length of each variable.
 */
static int env_value(struct ctx *c, uint32_t thread, uint8_t *to)
{
	const uint8_t *mem = c->io->mem;
	size_t mem_len = c->io->mem_len;
	if (!thread || !c->key || (size_t)thread + sizeof(struct rae_thread) > mem_len)
		return 0;
	if (!(rd32(mem + thread + offsetof(struct rae_thread, present)) & RAE_TP_ENV))
		return 0;
	uint64_t addr = rd32(mem + thread + offsetof(struct rae_thread, env));
	uint64_t len = rd32(mem + thread + offsetof(struct rae_thread, env) + 4);
	uint64_t idx = addr + ((len + 1) & ~1ull);
	if (idx + 2 > mem_len)
		return 0;
	uint32_t n = rd16(mem + idx), nl = c->key_len;
	if (idx + 2 + 2ull * n > mem_len)
		return 0;
	uint64_t pos = addr;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t vl = rd16(mem + idx + 2 + 2 * k);
		if (pos + vl > idx)
			break;
		if (vl > nl + 1 && mem[pos + nl] == '=' && memcmp(mem + pos, c->key, nl) == 0) {
			uint64_t first = pos + nl + 1, end = pos + vl;
			while (first < end && mem[first] == ' ')
				first++;
			while (end > first && mem[end - 1] == ' ')
				end--;
			return copy(c, mem + first, (uint32_t)(end - first), to);
		}
		pos += vl + 1;
	}
	return copy(c, mem + addr, 0, to);
}

/*
 * evt.buffer and evt.arg.data of a record with an I/O buffer (rae_syscall.data). evt.buffer is the
 * bytes: libsinsp's TYPE_BUFFER extracts the raw `data` parameter when a filter compares it
 * (sinsp_filtercheck_event.cpp, m_is_compare: extract_argraw(evt, len, "data")). evt.arg.data is
 * the parameter as text: libsinsp's TYPE_ARGSTR renders it in PF_NORMAL when comparing, which is
 * binary_buffer_to_string_dots (event.cpp): each byte that isprint() in the C locale (0x20..0x7e)
 * as itself, any other as '.'; render.ts printableData is the TypeScript side.
 */
static int data_value(struct ctx *c, struct facts *f, int field, uint8_t *to)
{
	uint16_t o = rd16(f->rec + offsetof(struct rae_syscall, data)), l = rd16(f->rec + offsetof(struct rae_syscall, data) + 2);
	if (!(f->cls & RAE_NRC_DATA) || o == 0 || (uint32_t)o + l >= f->len)
		return 0;
	if (field == RAE_FLD_BUFFER)
		return copy(c, f->rec + o, l, to);
	uint32_t at = alloc(c, l);
	if (!at && l)
		return 0;
	for (uint32_t i = 0; i < l; i++) {
		uint8_t b = f->rec[o + i];
		c->io->mem[at + i] = b >= 0x20 && b <= 0x7e ? b : '.';
	}
	return ref(to, at, l);
}

/* The field of each RAE_NRC_PATHARG kind. */
static const int PATH_FIELD[8] = { 0, RAE_FLD_ARG_NAME, RAE_FLD_ARG_PATH, RAE_FLD_ARG_FILENAME, RAE_FLD_ARG_OLDPATH, 0, 0, 0 };

static int value(struct ctx *c, struct facts *f, int field, uint8_t *to, int64_t evt_num)
{
	int ok = f->ret >= 0;
	switch (field) {
	case RAE_FLD_NUM: return num(to, evt_num);
	case RAE_FLD_RAWRES: return num(to, f->ret);
	case RAE_FLD_FAILED: return num(to, ok ? 0 : 1);
	case RAE_FLD_RES:
		if (ok)
			return konst(c, 0, to);
		return f->ret > -RAE_K_ERRNO_END && konst(c, (int)-f->ret, to);
	case RAE_FLD_FDNUM:
		if (f->cls & RAE_NRC_FD_RET)
			return num(to, ok ? f->ret : -1); /* a failed call: -1 */
		if (f->cls & RAE_NRC_FD_ARG0)
			return num(to, (int32_t)rd32(f->rec + offsetof(struct rae_syscall, args)));
		return 0;
	case RAE_FLD_NAME:
		/* an opened file, a unix socket's path or an IPv4 tuple (other syscalls' paths are no fd's name) */
		if (!f->has_name)
			return (f->fam == AF_INET_ || f->fam == AF_INET6_) && tuple_name(c, f, to);
		return ((f->cls & RAE_NRC_OPEN) || f->fam == AF_UNIX_) && fd_name(c, f, to);
	case RAE_FLD_NAMERAW:
		if (!(f->cls & RAE_NRC_OPEN))
			return value(c, f, RAE_FLD_NAME, to, evt_num);
		/* fall through */
	case RAE_FLD_ARG_TARGET:
		return raw_path(c, f, to);
	case RAE_FLD_DIR:
	case RAE_FLD_FILE: {
		if (!(f->cls & RAE_NRC_OPEN) || !fd_name(c, f, to))
			return 0;
		const uint8_t *a = c->io->mem + f->name_addr;
		long k = (long)f->name_len - 1;
		while (k >= 0 && a[k] != '/')
			k--;
		if (field == RAE_FLD_FILE)
			return ref(to, f->name_addr + (uint32_t)(k + 1), f->name_len - (uint32_t)(k + 1));
		return k >= 0 && ref(to, f->name_addr, k == 0 ? 1 : (uint32_t)k);
	}
	case RAE_FLD_TYPECHAR:
	case RAE_FLD_TYPE: {
		int i = field == RAE_FLD_TYPECHAR ? 0 : 1;
		if (f->cls & RAE_NRC_OPEN)
			return konst(c, (f->flags & 0x10000) ? RAE_K_D + i : RAE_K_F + i, to);
		if (f->cls & RAE_NRC_SOCKET) {
			/* the new socket's type by its domain (libsinsp parse_socket_exit / add_socket); none when it failed */
			if (f->ret < 0)
				return 0;
			if (f->flags == AF_INET_ || f->flags == AF_INET6_ || f->flags == AF_UNIX_)
				return konst(c, (f->flags == AF_INET_ ? RAE_K_4 : f->flags == AF_INET6_ ? RAE_K_6 : RAE_K_U) + i, to);
			if (f->flags == AF_NETLINK_)
				return i == 0 ? text(c, "n", 1, to) : text(c, "netlink", 7, to);
			return i == 0 ? text(c, "o", 1, to) : text(c, "<NA>", 4, to); /* SCAP_FD_UNKNOWN */
		}
		if (f->fam == AF_INET_)
			return konst(c, RAE_K_4 + i, to);
		if (f->fam == AF_INET6_)
			return konst(c, RAE_K_6 + i, to);
		if (f->fam == AF_UNIX_)
			return konst(c, RAE_K_U + i, to);
		return 0;
	}
	case RAE_FLD_FAMILY:
		if (f->cls & RAE_NRC_SOCKET) {
			if (f->ret < 0)
				return 0;
			if (f->flags == AF_INET_ || f->flags == AF_INET6_)
				return konst(c, RAE_K_IP, to);
			return f->flags == AF_UNIX_ && konst(c, RAE_K_UNIX, to);
		}
		if (f->fam == AF_INET_ || f->fam == AF_INET6_)
			return konst(c, RAE_K_IP, to);
		return f->fam == AF_UNIX_ && konst(c, RAE_K_UNIX, to);
	case RAE_FLD_READ:
	case RAE_FLD_WRITE:
	case RAE_FLD_CREATE: {
		if (!(f->cls & RAE_NRC_OPEN))
			return field != RAE_FLD_CREATE && num(to, 0); /* false for other syscalls */
		uint32_t acc = f->flags & 3;
		int v = field == RAE_FLD_READ ? (acc == 0 || acc == 2) : field == RAE_FLD_WRITE ? (acc == 1 || acc == 2) : (f->flags & 0x40) != 0;
		return num(to, v);
	}
	case RAE_FLD_SIP: return ip(c, f->server, to);
	case RAE_FLD_CIP: return ip(c, f->client, to);
	case RAE_FLD_LIP: return ip(c, f->local, to);
	case RAE_FLD_RIP: return ip(c, f->peer, to);
	case RAE_FLD_SIP_NAME: return dns_name(c, f->server, to);
	case RAE_FLD_CIP_NAME: return dns_name(c, f->client, to);
	case RAE_FLD_LIP_NAME: return dns_name(c, f->local, to);
	case RAE_FLD_RIP_NAME: return dns_name(c, f->peer, to);
	case RAE_FLD_SPORT: return port(f->server, to);
	case RAE_FLD_CPORT: return port(f->client, to);
	case RAE_FLD_LPORT: return port(f->local, to);
	case RAE_FLD_RPORT: return port(f->peer, to);
	case RAE_FLD_IPS:
	case RAE_FLD_PORTS: {
		uint32_t at = alloc(c, 16);
		if (!at)
			return 0;
		uint32_t n = 0;
		const uint8_t *ends[2] = { f->client, f->server };
		for (int e = 0; e < 2; e++)
			if (field == RAE_FLD_IPS ? ip(c, ends[e], c->io->mem + at + 8 * n) : port(ends[e], c->io->mem + at + 8 * n))
				n++;
		return n > 0 && ref(to, at, n);
	}
	case RAE_FLD_ARG_FLAGS: {
		uint32_t k = (f->cls >> RAE_NRC_FLAGS_SHIFT) & 0xf;
		if (k == RAE_NRC_FLAGS_AT2 || k == RAE_NRC_FLAGS_AT4)
			return at_flags(c, f->flags, to);
		return (f->cls & RAE_NRC_OPEN) && open_flags(c, f->flags, to);
	}
	case RAE_FLD_L4PROTO: {
		uint32_t t;
		if (f->cls & RAE_NRC_SOCKET) {
			uint64_t d = rd64(f->rec + offsetof(struct rae_syscall, args));
			if (d != AF_INET_ && d != AF_INET6_)
				return 0;
			t = (uint32_t)rd64(f->rec + offsetof(struct rae_syscall, args) + 8) & 0xf;
		} else {
			if (f->fam != AF_INET_ && f->fam != AF_INET6_)
				return 0;
			t = rd32(f->rec + offsetof(struct rae_syscall, sock_type)) & 0xf;
			if (t == 0 && (f->cls & RAE_NRC_SERVER))
				t = 1; /* accept: a stream socket */
		}
		return t >= 1 && t <= 3 && konst(c, RAE_K_L4 + (int)t - 1, to);
	}
	case RAE_FLD_CONNECTED:
		return num(to, (f->cls & RAE_NRC_CONNECT) ? (f->ret >= 0 || f->ret == -115) : (f->cls & RAE_NRC_SERVER) != 0);
	case RAE_FLD_NAME_CHANGED:
		return num(to, (f->cls & RAE_NRC_SENDTO) && rd16(f->peer) != 0);
	case RAE_FLD_DURATION: {
		if (f->thread < RAE_STATE_THREADS || (f->thread - RAE_STATE_THREADS) % RAE_THREAD_SIZE)
			return 0;
		uint64_t i = (f->thread - RAE_STATE_THREADS) / RAE_THREAD_SIZE;
		if (i >= c->io->starts_len || c->io->starts[i] == 0)
			return 0;
		return num(to, (int64_t)(rd64(f->rec + offsetof(struct rae_hdr, ts_ns)) - c->io->starts[i]));
	}
	case RAE_FLD_CTR_DURATION: {
		/* the process's container entry (host/sources/container/table.ts) holds start_ts as epoch ns */
		if (f->thread < RAE_STATE_THREADS || (f->thread - RAE_STATE_THREADS) % RAE_THREAD_SIZE)
			return 0;
		uint32_t ctr = rd32(c->io->mem + f->thread + offsetof(struct rae_thread, ctr));
		if (ctr < RAE_STATE_CONTAINERS || (size_t)ctr + RAE_CTR_SIZE > c->io->mem_len || !(rd32(c->io->mem + ctr + RAE_CTR_PRESENT) & RAE_CP_START_TS))
			return 0;
		return num(to, (int64_t)(rd64(f->rec + offsetof(struct rae_hdr, ts_ns)) + c->epoch - rd64(c->io->mem + ctr + RAE_CTR_START_TS)));
	}
	case RAE_FLD_ARG_NAME:
	case RAE_FLD_ARG_PATH:
	case RAE_FLD_ARG_FILENAME:
	case RAE_FLD_ARG_OLDPATH: {
		/* the syscall's path parameter: a relative one resolved like fd.name, else as passed */
		if (PATH_FIELD[(f->cls >> RAE_NRC_PATHARG_SHIFT) & 7] != field)
			return 0;
		uint16_t po = rd16(f->rec + offsetof(struct rae_syscall, path)), pl = rd16(f->rec + offsetof(struct rae_syscall, path) + 2);
		if (po == 0 || (uint32_t)po + pl >= f->len)
			return 0;
		if (!(f->cls & RAE_NRC_PATH_RAW) && pl > 0 && f->rec[po] != '/')
			return fd_name(c, f, to);
		return raw_path(c, f, to);
	}
	case RAE_FLD_ARG_NEWPATH:
		return (f->cls & RAE_NRC_NEWPATH) && new_path(c, f, to);
	case RAE_FLD_ARG_MODE:
		return mode_text(c, f, to);
	case RAE_FLD_ARG_FD: {
		uint32_t k = (f->cls >> RAE_NRC_FDARG_SHIFT) & 3;
		if (!k)
			return 0;
		return fd_text(c, k == 1 ? f->ret : (int32_t)rd32(f->rec + offsetof(struct rae_syscall, args)), to);
	}
	case RAE_FLD_ARG_PID: {
		char s[16];
		return (f->cls & RAE_NRC_PTRACE) && text(c, s, snprintf(s, sizeof(s), "%d", (int32_t)rd32(f->rec + offsetof(struct rae_syscall, args) + 8)), to);
	}
	case RAE_FLD_ARG_DIRFD:
		return (f->cls & RAE_NRC_DIRFD) && fd_text(c, (int32_t)rd32(f->rec + offsetof(struct rae_syscall, args)), to);
	case RAE_FLD_ARG_RES: {
		/* PT_ERRNO: a negative value's errno name, else the number (render.ts resArgText) */
		char s[24];
		if (!(f->cls & RAE_NRC_RES))
			return 0;
		if (f->ret < 0 && f->ret > -RAE_K_ERRNO_END && konst(c, (int)-f->ret, to))
			return 1;
		return text(c, s, snprintf(s, sizeof(s), "%lld", (long long)f->ret), to);
	}
	case RAE_FLD_ARG_LINKPATH:
		return (f->cls & RAE_NRC_LINKPATH) && new_path(c, f, to);
	case RAE_FLD_PROC_ENV:
		return env_value(c, f->thread, to);
	case RAE_FLD_ARG_CMD: {
		char s[16];
		return (f->cls & RAE_NRC_BPF) && text(c, s, snprintf(s, sizeof(s), "%d", (int32_t)rd32(f->rec + offsetof(struct rae_syscall, args))), to);
	}
	case RAE_FLD_ARG_DOMAIN:
	case RAE_FLD_ARG_REQUEST: {
		int64_t a0 = (int64_t)rd64(f->rec + offsetof(struct rae_syscall, args));
		if (!(f->cls & (field == RAE_FLD_ARG_DOMAIN ? RAE_NRC_SOCKET : RAE_NRC_PTRACE)))
			return 0;
		int id = -1;
		if (field == RAE_FLD_ARG_DOMAIN && a0 >= 0 && a0 < 64)
			id = RAE_K_DOMAIN + (int)a0;
		else if (field == RAE_FLD_ARG_REQUEST && a0 >= 0 && a0 < 32)
			id = RAE_K_PTRACE + (int)a0;
		else if (field == RAE_FLD_ARG_REQUEST && a0 >= 0x4200 && a0 < 0x4210)
			id = RAE_K_PTRACE_HI + (int)(a0 - 0x4200);
		if (id >= 0 && konst(c, id, to))
			return 1;
		char s[24];
		int n = snprintf(s, sizeof(s), "%lld", (long long)a0);
		return n > 0 && copy(c, (const uint8_t *)s, (uint32_t)n, to);
	}
	case RAE_FLD_TID:
		return num(to, rd32(f->rec + offsetof(struct rae_hdr, tid)));
	case RAE_FLD_RAWTIME:
		wr64(to, rd64(f->rec + offsetof(struct rae_hdr, ts_ns)) + c->epoch);
		return 1;
	case RAE_FLD_TIME: {
		char s[24];
		int n = snprintf(s, sizeof(s), "%llu", (unsigned long long)(rd64(f->rec + offsetof(struct rae_hdr, ts_ns)) + c->epoch));
		return n > 0 && copy(c, (const uint8_t *)s, (uint32_t)n, to);
	}
	case RAE_FLD_DIRECTION: return konst(c, RAE_K_DIRECTION, to);
	case RAE_FLD_SOURCE: return konst(c, RAE_K_SOURCE, to);
	case RAE_FLD_HOSTNAME: {
		/* present even when empty (konst() takes length 0 for "no name") */
		const int32_t *k = c->io->plan + RAE_IP_CONST + 2 * RAE_K_HOSTNAME;
		return ref(to, (uint32_t)(c->konst + (uint32_t)k[0]), (uint32_t)k[1]);
	}
	case RAE_FLD_BUFFER:
	case RAE_FLD_ARG_DATA:
		return data_value(c, f, field, to);
	case RAE_FLD_OPEN_EXEC: {
		/* render.ts isOpenExec: O_CREAT or O_TMPFILE, and an execute bit in the mode */
		uint32_t w = (f->cls >> RAE_NRC_MODE_SHIFT) & 7;
		return num(to, (f->cls & RAE_NRC_OPEN) && w && (f->flags & (0100 | 020000000)) && (mode_arg(f, w) & 0111));
	}
	default:
		return 0;
	}
}

/* Whether an absolute path has '//', '.' or '..' components (posix.normalize would change it). */
static int needs_normalize(const uint8_t *s, uint32_t len)
{
	for (uint32_t i = 0; i + 1 < len; i++)
		if (s[i] == '/' && (s[i + 1] == '/' || s[i + 1] == '.'))
			return 1;
	return 0;
}

/* Node's posix.normalize of an absolute path into d (room for len bytes); returns the length. */
static uint32_t normalize(const uint8_t *s, uint32_t len, uint8_t *d)
{
	uint32_t n = 1, i = 0;
	d[0] = '/';
	while (i < len) {
		while (i < len && s[i] == '/')
			i++;
		uint32_t b = i;
		while (i < len && s[i] != '/')
			i++;
		uint32_t sl = i - b;
		if (sl == 0 || (sl == 1 && s[b] == '.'))
			continue;
		if (sl == 2 && s[b] == '.' && s[b + 1] == '.') {
			while (n > 1 && d[n - 1] != '/')
				n--;
			if (n > 1)
				n--; /* the separator before the dropped component */
			continue;
		}
		if (n > 1)
			d[n++] = '/';
		memcpy(d + n, s + b, sl);
		n += sl;
	}
	if (len > 0 && s[len - 1] == '/' && n > 1)
		d[n++] = '/';
	return n;
}

/* The facts of one SYSCALL record; a relative path is joined with its directory in the heap. */
static void facts(struct ctx *c, struct facts *f, const uint8_t *rec, uint32_t len, uint16_t nr)
{
	const int32_t *plan = c->io->plan;
	f->rec = rec;
	f->cls = nr < RAE_NR_SYSCALLS ? (uint32_t)plan[RAE_IP_NR + 2 * nr + 1] : 0;
	f->ret = (int64_t)rd64(rec + offsetof(struct rae_hdr, ret));
	uint16_t po = rd16(rec + offsetof(struct rae_syscall, path)), pl = rd16(rec + offsetof(struct rae_syscall, path) + 2);
	uint16_t d0 = rd16(rec + offsetof(struct rae_syscall, dir)), dl = rd16(rec + offsetof(struct rae_syscall, dir) + 2);
	if ((uint32_t)po + pl >= len)
		po = pl = 0; /* a string must end inside the record (its NUL included) */
	if ((uint32_t)d0 + dl >= len)
		d0 = dl = 0;
	f->len = len;
	f->has_name = 0;
	f->joined = 0;
	f->name_addr = 0;
	f->raw_addr = 0;
	if (po != 0) {
		if (rec[po] == '/' || d0 == 0) {
			f->has_name = 1;
			f->name = rec + po;
			f->name_len = pl;
		} else {
			uint32_t slash = dl > 0 && rec[d0 + dl - 1] == '/' ? 0 : 1;
			uint32_t at = alloc(c, dl + slash + pl);
			if (at) {
				uint8_t *m = c->io->mem + at;
				memcpy(m, rec + d0, dl);
				if (slash)
					m[dl] = '/';
				memcpy(m + dl + slash, rec + po, pl);
				f->has_name = 1;
				f->name = m;
				f->name_len = dl + slash + pl;
				f->name_addr = at;
				f->joined = 1;
			}
		}
	}
	if (f->has_name && f->name_len > 0 && f->name[0] == '/' && needs_normalize(f->name, f->name_len)) {
		uint32_t at = alloc(c, f->name_len);
		if (at) {
			f->name_len = normalize(f->name, f->name_len, c->io->mem + at);
			f->name = c->io->mem + at;
			f->name_addr = at;
			f->joined = 1; /* no longer the bytes of the path as passed */
		} else {
			f->has_name = 0;
		}
	}
	switch ((f->cls >> RAE_NRC_FLAGS_SHIFT) & 0xf) {
	case 1: f->flags = 0x241; break;
	case 2: f->flags = rd32(rec + offsetof(struct rae_syscall, aux)); break;
	case 3: f->flags = rd32(rec + offsetof(struct rae_syscall, args) + 8); break;
	case 4: case RAE_NRC_FLAGS_AT2: f->flags = rd32(rec + offsetof(struct rae_syscall, args) + 16); break;
	case RAE_NRC_FLAGS_AT4: f->flags = rd32(rec + offsetof(struct rae_syscall, args) + 32); break;
	case RAE_NRC_FLAGS_DOMAIN: f->flags = rd32(rec + offsetof(struct rae_syscall, args)); break;
	default: f->flags = 0;
	}
	f->local = rec + offsetof(struct rae_syscall, local);
	f->peer = rec + offsetof(struct rae_syscall, peer);
	int server = (f->cls & RAE_NRC_SERVER) != 0;
	f->client = server ? f->peer : f->local;
	f->server = server ? f->local : f->peer;
	f->fam = rd16(f->peer) ? rd16(f->peer) : rd16(f->local);
	/* fields.ts serverSocket: a successful bind or any listen on an IP socket with a local port */
	uint16_t lfam = rd16(f->local), lport = rd16(f->local + offsetof(struct rae_sockaddr, port));
	f->serv_sock = ((f->cls & RAE_NRC_LISTEN) || ((f->cls & RAE_NRC_BIND) && f->ret >= 0)) && (lfam == AF_INET_ || lfam == AF_INET6_) && lport != 0;
	if (f->serv_sock) {
		f->server = f->local;
		f->client = f->local = f->peer = NO_END;
	}
}

#define BIT(f) (1ull << (f))
/* Fields every record can have, and those that need a path, a socket address, an open... */
#define ALWAYS (BIT(RAE_FLD_NUM) | BIT(RAE_FLD_RAWRES) | BIT(RAE_FLD_RES) | BIT(RAE_FLD_FAILED) | BIT(RAE_FLD_TYPECHAR) | \
		BIT(RAE_FLD_TYPE) | BIT(RAE_FLD_FAMILY) | BIT(RAE_FLD_NAMERAW) | BIT(RAE_FLD_ARG_TARGET) | BIT(RAE_FLD_L4PROTO) | BIT(RAE_FLD_READ) | BIT(RAE_FLD_WRITE) | \
		BIT(RAE_FLD_CONNECTED) | BIT(RAE_FLD_NAME_CHANGED) | BIT(RAE_FLD_DURATION) | BIT(RAE_FLD_CTR_DURATION) | BIT(RAE_FLD_TID) | BIT(RAE_FLD_TIME) | \
		BIT(RAE_FLD_RAWTIME) | BIT(RAE_FLD_DIRECTION) | BIT(RAE_FLD_SOURCE) | BIT(RAE_FLD_HOSTNAME) | BIT(RAE_FLD_OPEN_EXEC))
#define NEED_NAME (BIT(RAE_FLD_NAME) | BIT(RAE_FLD_DIR) | BIT(RAE_FLD_FILE))
#define NEED_ADDR (BIT(RAE_FLD_NAME) | BIT(RAE_FLD_SIP) | BIT(RAE_FLD_CIP) | BIT(RAE_FLD_LIP) | BIT(RAE_FLD_RIP) | \
		   BIT(RAE_FLD_SPORT) | BIT(RAE_FLD_CPORT) | BIT(RAE_FLD_LPORT) | BIT(RAE_FLD_RPORT) | BIT(RAE_FLD_IPS) | \
		   BIT(RAE_FLD_PORTS) | BIT(RAE_FLD_SIP_NAME) | BIT(RAE_FLD_CIP_NAME) | BIT(RAE_FLD_LIP_NAME) | BIT(RAE_FLD_RIP_NAME))
#define NEED_OPEN (BIT(RAE_FLD_READ) | BIT(RAE_FLD_WRITE) | BIT(RAE_FLD_CREATE) | BIT(RAE_FLD_ARG_FLAGS))

/*
 * Fields whose value depends only on the record's syscall number, return value, open flags and
 * address family (and on batch-wide state: constants, the cached open-flags string); fd.num too
 * when it is the return value. A record with the same four as the one before copies them.
 */
#define STABLE (BIT(RAE_FLD_RAWRES) | BIT(RAE_FLD_FAILED) | BIT(RAE_FLD_RES) | BIT(RAE_FLD_TYPECHAR) | BIT(RAE_FLD_TYPE) | \
		BIT(RAE_FLD_FAMILY) | BIT(RAE_FLD_READ) | BIT(RAE_FLD_WRITE) | BIT(RAE_FLD_CREATE) | BIT(RAE_FLD_ARG_FLAGS) | \
		BIT(RAE_FLD_CONNECTED) | BIT(RAE_FLD_DIRECTION) | BIT(RAE_FLD_SOURCE) | BIT(RAE_FLD_HOSTNAME))

/* A superset of the fields value() can find in this record (a pure shortcut: same results). */
static uint64_t possible(const struct facts *f)
{
	uint64_t can = ALWAYS;
	if (f->has_name)
		can |= NEED_NAME;
	if (rd16(f->server) || rd16(f->client))
		can |= NEED_ADDR;
	if (f->cls & RAE_NRC_OPEN)
		can |= NEED_OPEN;
	if (f->cls & (RAE_NRC_FD_RET | RAE_NRC_FD_ARG0))
		can |= BIT(RAE_FLD_FDNUM);
	if (f->cls & RAE_NRC_SOCKET)
		can |= BIT(RAE_FLD_ARG_DOMAIN);
	uint32_t fk = (f->cls >> RAE_NRC_FLAGS_SHIFT) & 0xf;
	if (fk == RAE_NRC_FLAGS_AT2 || fk == RAE_NRC_FLAGS_AT4)
		can |= BIT(RAE_FLD_ARG_FLAGS);
	if (f->cls & RAE_NRC_PTRACE)
		can |= BIT(RAE_FLD_ARG_REQUEST);
	int pk = PATH_FIELD[(f->cls >> RAE_NRC_PATHARG_SHIFT) & 7];
	if (pk)
		can |= BIT(pk);
	if (f->cls & RAE_NRC_NEWPATH)
		can |= BIT(RAE_FLD_ARG_NEWPATH);
	if ((f->cls >> RAE_NRC_MODE_SHIFT) & 7)
		can |= BIT(RAE_FLD_ARG_MODE);
	if ((f->cls >> RAE_NRC_FDARG_SHIFT) & 3)
		can |= BIT(RAE_FLD_ARG_FD);
	if (f->cls & RAE_NRC_BPF)
		can |= BIT(RAE_FLD_ARG_CMD);
	if (f->cls & RAE_NRC_PTRACE)
		can |= BIT(RAE_FLD_ARG_PID);
	if (f->cls & RAE_NRC_DIRFD)
		can |= BIT(RAE_FLD_ARG_DIRFD);
	if (f->cls & RAE_NRC_RES)
		can |= BIT(RAE_FLD_ARG_RES);
	if (f->cls & RAE_NRC_LINKPATH)
		can |= BIT(RAE_FLD_ARG_LINKPATH);
	if (f->thread)
		can |= BIT(RAE_FLD_PROC_ENV);
	if ((f->cls & RAE_NRC_DATA) && rd16(f->rec + offsetof(struct rae_syscall, data)))
		can |= BIT(RAE_FLD_BUFFER) | BIT(RAE_FLD_ARG_DATA);
	return can;
}

long rae_ingest(const struct rae_ingest_io *io, size_t start)
{
	const int32_t *plan = io->plan;
	double *st = io->state;
	if (io->plan_len < RAE_IP_SLOTS)
		return -1;
	uint32_t stride = (uint32_t)plan[RAE_IP_STRIDE], head = (uint32_t)plan[RAE_IP_HEAD];
	uint32_t nslots = (uint32_t)plan[RAE_IP_NSLOTS];
	if (stride == 0 || head > stride || io->plan_len < RAE_IP_SLOTS + 3 * (size_t)nslots)
		return -1;
	const int32_t *slots = plan + RAE_IP_SLOTS;
	int host_uid = 0; /* evt.arg.uid is read: setuid records are left to the host (user names) */
	for (uint32_t j = 0; j < nslots; j++)
		host_uid |= slots[3 * j] == RAE_FLD_ARG_UID;
	for (uint32_t j = 0; j < nslots; j++) {
		int field = slots[3 * j] & RAE_SLOT_FIELD_MASK;
		uint32_t arg = (uint32_t)slots[3 * j] >> RAE_SLOT_ARG_SHIFT;
		if (field < 1 || field >= RAE_FLD_COUNT || slots[3 * j + 1] < 0 || (uint32_t)slots[3 * j + 1] + 8 > stride || slots[3 * j + 2] < 0 ||
		    RAE_REC_PRESENT + 4 * ((uint32_t)slots[3 * j + 2] >> 5) + 4 > head)
			return -1;
		/* a keyed field's argument: a byte count and its bytes, inside the plan */
		if (arg && (arg >= io->plan_len || plan[arg] < 0 || arg + 1 + ((size_t)plan[arg] + 3) / 4 > io->plan_len))
			return -1;
	}
	struct ctx c = { .io = io, .heap = (uint64_t)st[RAE_IS_HEAP], .heap_end = (uint64_t)st[RAE_IS_HEAP_END] };
	uint64_t base = (uint64_t)st[RAE_IS_BASE];
	uint64_t n = (uint64_t)st[RAE_IS_EVENTS], max = (uint64_t)st[RAE_IS_MAX];
	if (c.heap_end > io->mem_len || c.heap > c.heap_end || max > io->offsets_len || base + max * stride > io->mem_len)
		return -1;
	c.konst = (uint64_t)st[RAE_IS_CONST];
	c.epoch = (uint64_t)st[RAE_IS_EPOCH_LO] | ((uint64_t)st[RAE_IS_EPOCH_HI] << 32);
	if (c.konst == 0) {
		uint32_t at = alloc(&c, (uint32_t)io->blob_len);
		if (!at && io->blob_len)
			return -1;
		memcpy(io->mem + at, io->blob, io->blob_len);
		c.konst = at;
		for (int k = 0; k < RAE_K_COUNT; k++)
			if ((uint64_t)plan[RAE_IP_CONST + 2 * k] + (uint64_t)plan[RAE_IP_CONST + 2 * k + 1] > io->blob_len)
				return -1;
	}
	int64_t evt_num = (int64_t)st[RAE_IS_NUM];
	/* the previous eval record of this call and its key (nr, ret, flags, family), for STABLE fields */
	const uint8_t *prev = NULL;
	uint16_t prev_nr = 0, prev_fam = 0;
	uint32_t prev_flags = 0;
	int64_t prev_ret = 0;
	size_t off = start;
	int stop = 0;
	int lookup = st[RAE_IS_LOOKUP] != 0;
	while (off + sizeof(struct rae_hdr) <= io->bytes) {
		const uint8_t *rec = io->view + off;
		uint32_t len = rd32(rec + offsetof(struct rae_hdr, len));
		if (len < sizeof(struct rae_hdr) || len % 8 || off + len > io->bytes)
			break;
		if (rd16(rec + offsetof(struct rae_hdr, kind)) != RAE_KIND_SYSCALL) {
			stop = 1;
			break;
		}
		if (n < max && len >= sizeof(struct rae_syscall)) {
			uint16_t nr = rd16(rec + offsetof(struct rae_hdr, nr));
			uint32_t pid = rd32(rec + offsetof(struct rae_hdr, pid));
			/* the process of the record's thread group id (any thread, also of a process seen only in /proc) */
			uint32_t thread = pid < io->pid_limit ? io->pid_addr[pid] : 0;
			if (lookup && thread == 0 && pid != 0 && pid < io->pid_limit) {
				stop = 3; /* the host reads the process (unknown-process.ts), then resumes here */
				break;
			}
			if (host_uid && nr < RAE_NR_SYSCALLS && (plan[RAE_IP_NR + 2 * nr + 1] & RAE_NRC_SETUID)) {
				stop = 2;
				break;
			}
			uint8_t *e = io->mem + base + n * stride;
			memset(e, 0, head);
			wr32(e + RAE_REC_TYPE, nr < RAE_NR_SYSCALLS ? (uint32_t)plan[RAE_IP_NR + 2 * nr] : 0);
			wr32(e + RAE_REC_THREAD, thread);
			evt_num++;
			if (nslots) {
				struct facts f;
				facts(&c, &f, rec, len, nr);
				f.thread = thread;
				uint64_t can = possible(&f);
				uint64_t same = 0;
				if (prev && nr == prev_nr && f.ret == prev_ret && f.flags == prev_flags && f.fam == prev_fam)
					same = STABLE | ((f.cls & RAE_NRC_FD_RET) ? BIT(RAE_FLD_FDNUM) : 0);
				for (uint32_t j = 0; j < nslots; j++) {
					uint32_t idx = (uint32_t)slots[3 * j + 2];
					int field = slots[3 * j] & RAE_SLOT_FIELD_MASK;
					uint32_t arg = (uint32_t)slots[3 * j] >> RAE_SLOT_ARG_SHIFT;
					c.key = arg ? (const uint8_t *)(plan + arg + 1) : NULL;
					c.key_len = arg ? (uint32_t)plan[arg] : 0;
					if (!((can >> field) & 1))
						continue; /* value() would find nothing: skip its dispatch */
					int set;
					if ((same >> field) & 1) {
						/* what value() wrote for the previous record, which it would write again */
						set = (rd32(prev + RAE_REC_PRESENT + 4 * (idx >> 5)) >> (idx & 31)) & 1;
						if (set)
							memcpy(e + slots[3 * j + 1], prev + slots[3 * j + 1], 8);
					} else {
						set = value(&c, &f, field, e + slots[3 * j + 1], evt_num);
					}
					if (set) {
						uint8_t *w = e + RAE_REC_PRESENT + 4 * (idx >> 5);
						wr32(w, rd32(w) | (1u << (idx & 31)));
					}
				}
				prev = e;
				prev_nr = nr;
				prev_ret = f.ret;
				prev_flags = f.flags;
				prev_fam = f.fam;
			}
			io->offsets[n++] = (uint32_t)off;
		}
		off += len;
	}
	st[RAE_IS_EVENTS] = (double)n;
	st[RAE_IS_HEAP] = (double)c.heap;
	st[RAE_IS_NUM] = (double)evt_num;
	st[RAE_IS_CONST] = (double)c.konst;
	st[RAE_IS_STOP] = stop;
	return (long)off;
}
