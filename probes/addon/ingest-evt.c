// SPDX-License-Identifier: Apache-2.0
/*
 * The evt.* field class of the native translator (ingest-internal.h; libsinsp
 * sinsp_filtercheck_event), but for the syscall's parameters (ingest-arg.c): the event's number,
 * result, time, direction, source and host, what an open does, and its I/O buffer. The
 * TypeScript twin is host/sources/syscall/ingest/evt.ts.
 */
#include <stdio.h>

#include "ingest-internal.h"

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

int rae_evt_value(struct ctx *c, struct facts *f, int field, uint8_t *to)
{
	int ok = f->ret >= 0;
	switch (field) {
	case RAE_FLD_NUM: return num(to, c->evt_num);
	case RAE_FLD_RAWRES: return num(to, f->ret);
	case RAE_FLD_FAILED: return num(to, ok ? 0 : 1);
	case RAE_FLD_RES:
		if (ok)
			return konst(c, 0, to);
		return f->ret > -RAE_K_ERRNO_END && konst(c, (int)-f->ret, to);
	case RAE_FLD_READ:
	case RAE_FLD_WRITE:
	case RAE_FLD_CREATE: {
		if (!(f->cls & RAE_NRC_OPEN))
			return field != RAE_FLD_CREATE && num(to, 0); /* false for other syscalls */
		uint32_t acc = f->flags & 3;
		int v = field == RAE_FLD_READ ? (acc == 0 || acc == 2) : field == RAE_FLD_WRITE ? (acc == 1 || acc == 2) : (f->flags & 0x40) != 0;
		return num(to, v);
	}
	case RAE_FLD_OPEN_EXEC: {
		/* render.ts isOpenExec: O_CREAT or O_TMPFILE, and an execute bit in the mode */
		uint32_t w = (f->cls >> RAE_NRC_MODE_SHIFT) & 7;
		return num(to, (f->cls & RAE_NRC_OPEN) && w && (f->flags & (0100 | 020000000)) && (rae_mode_arg(f, w) & 0111));
	}
	case RAE_FLD_RAWTIME:
		wr64(to, rd64(f->rec + offsetof(struct rae_hdr, ts_ns)) + c->epoch);
		return 1;
	case RAE_FLD_TIME: {
		char s[24];
		int n = fmt_udec(s, rd64(f->rec + offsetof(struct rae_hdr, ts_ns)) + c->epoch);
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
	default:
		return 0;
	}
}
