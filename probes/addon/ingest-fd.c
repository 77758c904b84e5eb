// SPDX-License-Identifier: Apache-2.0
/*
 * The fd.* field class of the native translator (ingest-internal.h; libsinsp
 * sinsp_filtercheck_fd): the descriptor a SYSCALL record names or makes, its path and type, its
 * socket ends, their tuple as fd.name and the DNS table's names for their addresses. The
 * TypeScript twin is host/sources/syscall/ingest/fd.ts.
 */
#define _GNU_SOURCE /* memrchr */
#include <stdio.h>

#include "ingest-internal.h"

static int ip(struct ctx *c, const uint8_t *sa, uint8_t *to)
{
	uint16_t fam = rd16(sa + offsetof(struct rae_sockaddr, family));
	uint32_t n = fam == AF_INET_ ? 4 : fam == AF_INET6_ ? 16 : 0;
	return n && copy(c, sa + offsetof(struct rae_sockaddr, addr), n, to);
}

/*
 * An IP end's domain name: a binary search of the DNS table in the module's state region
 * (eval_abi.h RAE_STATE_DNS, written by host/sources/dns/table.ts; ingest/fd.ts endpointName), whose
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

/* The socket end of a per-end field by its place in its group (fd.sip, cip, lip, rip; the ports and names alike). */
static const uint8_t *end_of(const struct facts *f, int i)
{
	return i == 0 ? f->server : i == 1 ? f->client : i == 2 ? f->local : f->peer;
}

/* fd.directory or fd.filename of an opened file: fd.name up to or after its last '/'. */
static int path_part(struct ctx *c, struct facts *f, int field, uint8_t *to)
{
	if (!(f->cls & RAE_NRC_OPEN) || !rae_fd_name(c, f, to))
		return 0;
	if (f->slash == -2) {
		/* memrchr, not a loop a byte at a time: the scan was a tenth of the translation of an open */
		const uint8_t *a = c->io->mem + f->name_addr, *s = memrchr(a, '/', f->name_len);
		f->slash = s ? (int32_t)(s - a) : -1;
	}
	long k = f->slash;
	if (field == RAE_FLD_FILE)
		return ref(to, f->name_addr + (uint32_t)(k + 1), f->name_len - (uint32_t)(k + 1));
	return k >= 0 && ref(to, f->name_addr, k == 0 ? 1 : (uint32_t)k);
}

/* fd.typechar (i = 0) or fd.type (i = 1). */
static int fd_type(struct ctx *c, struct facts *f, int i, uint8_t *to)
{
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

/* fd.l4proto: socket(2)'s type argument, else the probe's sock_type of an IP socket. */
static int l4proto(struct ctx *c, struct facts *f, uint8_t *to)
{
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

int rae_fd_value(struct ctx *c, struct facts *f, int field, uint8_t *to)
{
	int ok = f->ret >= 0;
	switch (field) {
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
		return ((f->cls & RAE_NRC_OPEN) || f->fam == AF_UNIX_) && rae_fd_name(c, f, to);
	case RAE_FLD_NAMERAW:
		if (!(f->cls & RAE_NRC_OPEN))
			return rae_fd_value(c, f, RAE_FLD_NAME, to);
		return rae_raw_path(c, f, to);
	case RAE_FLD_DIR:
	case RAE_FLD_FILE:
		return path_part(c, f, field, to);
	case RAE_FLD_TYPECHAR:
	case RAE_FLD_TYPE:
		return fd_type(c, f, field == RAE_FLD_TYPECHAR ? 0 : 1, to);
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
	case RAE_FLD_SIP:
	case RAE_FLD_CIP:
	case RAE_FLD_LIP:
	case RAE_FLD_RIP:
		return ip(c, end_of(f, field - RAE_FLD_SIP), to);
	case RAE_FLD_SIP_NAME:
	case RAE_FLD_CIP_NAME:
	case RAE_FLD_LIP_NAME:
	case RAE_FLD_RIP_NAME:
		return dns_name(c, end_of(f, field - RAE_FLD_SIP_NAME), to);
	case RAE_FLD_SPORT:
	case RAE_FLD_CPORT:
	case RAE_FLD_LPORT:
	case RAE_FLD_RPORT:
		return port(end_of(f, field - RAE_FLD_SPORT), to);
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
	case RAE_FLD_L4PROTO:
		return l4proto(c, f, to);
	case RAE_FLD_CONNECTED:
		return num(to, (f->cls & RAE_NRC_CONNECT) ? (f->ret >= 0 || f->ret == -115) : (f->cls & RAE_NRC_SERVER) != 0);
	case RAE_FLD_NAME_CHANGED:
		return num(to, (f->cls & RAE_NRC_SENDTO) && rd16(f->peer) != 0);
	default:
		return 0;
	}
}
