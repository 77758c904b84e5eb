// SPDX-License-Identifier: Apache-2.0
/*
 * The evt.arg.* field class of the native translator (ingest-internal.h): the syscall's
 * parameters as libsinsp names and prints them (host/sources/syscall/render.ts), by the class bits
 * of the record's syscall. evt.arg.uid is not here: user names live in the host, which writes
 * setuid records itself when a rule reads it (RAE_IS_STOP 2). The TypeScript twin is
 * host/sources/syscall/ingest/evt-arg.ts.
 */
#include <stdio.h>

#include "ingest-internal.h"

const int rae_path_field[8] = { 0, RAE_FLD_ARG_NAME, RAE_FLD_ARG_PATH, RAE_FLD_ARG_FILENAME, RAE_FLD_ARG_OLDPATH, 0, 0, 0 };

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

struct bit_name {
	uint32_t bit;
	const char *name;
};

/* The names of the set bits of v among t[0..n), joined by '|' in t's order, else v's number. */
static int bit_names(struct ctx *c, uint32_t v, const struct bit_name *t, int count, uint8_t *to)
{
	char s[64];
	int n = 0;
	for (int i = 0; i < count; i++)
		if (v & t[i].bit)
			n += snprintf(s + n, sizeof(s) - (size_t)n, "%s%s", n ? "|" : "", t[i].name);
	if (n == 0)
		n = fmt_udec(s, v);
	return text(c, s, n, to);
}

/* evt.arg.flags of unlinkat/linkat (render.ts atFlags): the AT_* names of the set bits, else the number. */
static int at_flags(struct ctx *c, uint32_t flags, uint8_t *to)
{
	static const struct bit_name AT[] = { { 0x200, "AT_REMOVEDIR" }, { 0x400, "AT_SYMLINK_FOLLOW" }, { 0x1000, "AT_EMPTY_PATH" } };
	return bit_names(c, flags, AT, 3, to);
}

/*
 * evt.arg.flags of execve/execveat (evt-arg.ts execFlags, render.ts execveFlags): the thread
 * entry's EXE_* flags (the new image's after a success, the caller's after a failure, as the drivers
 * send), in libs' execve_flags order; none set prints 0. An entry without them gives none.
 */
static int exec_flags(struct ctx *c, const struct facts *f, uint8_t *to)
{
	static const struct bit_name EXE[] = {
		{ RAE_TF_EXE_WRITABLE, "EXE_WRITABLE" }, { RAE_TF_EXE_UPPER, "EXE_UPPER_LAYER" }, { RAE_TF_EXE_MEMFD, "EXE_FROM_MEMFD" },
		{ RAE_TF_EXE_LOWER, "EXE_LOWER_LAYER" } };
	const uint8_t *t = thread_entry(c, f);
	if (!t || !(rd32(t + offsetof(struct rae_thread, present)) & RAE_TP_EXE_WRITABLE))
		return 0;
	uint32_t tf = rd32(t + offsetof(struct rae_thread, flags));
	return bit_names(c, tf & (RAE_TF_EXE_WRITABLE | RAE_TF_EXE_UPPER | RAE_TF_EXE_MEMFD | RAE_TF_EXE_LOWER), EXE, 4, to);
}

/* The mode parameter of class word w (RAE_NRC_MODE_SHIFT: args[w - 1], 7 = openat2's aux[1]). */
uint32_t rae_mode_arg(const struct facts *f, uint32_t w)
{
	return w == 7 ? (uint32_t)rd64(f->rec + offsetof(struct rae_syscall, aux) + 8) : (uint32_t)rd64(f->rec + offsetof(struct rae_syscall, args) + 8 * (w - 1));
}

/* evt.arg.mode (render.ts chmodMode / openMode / hexMode). */
static int mode_text(struct ctx *c, struct facts *f, uint8_t *to)
{
	uint32_t w = (f->cls >> RAE_NRC_MODE_SHIFT) & 7, fmt = (f->cls >> RAE_NRC_MODEFMT_SHIFT) & 3;
	if (!w || !fmt)
		return 0;
	uint32_t v = rae_mode_arg(f, w);
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
		n = fmt_oct_alt(s, v);
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
	return text(c, s, fmt_dec(s, fd), to);
}

/* evt.arg.name/path/filename/oldpath: the syscall's path parameter, a relative one resolved like fd.name, else as passed. */
static int path_arg(struct ctx *c, struct facts *f, int field, uint8_t *to)
{
	if (rae_path_field[(f->cls >> RAE_NRC_PATHARG_SHIFT) & 7] != field)
		return 0;
	uint16_t po = rd16(f->rec + offsetof(struct rae_syscall, path)), pl = rd16(f->rec + offsetof(struct rae_syscall, path) + 2);
	if (po == 0 || (uint32_t)po + pl >= f->len)
		return 0;
	if (!(f->cls & RAE_NRC_PATH_RAW) && pl > 0 && f->rec[po] != '/')
		return rae_fd_name(c, f, to);
	return rae_raw_path(c, f, to);
}

/* evt.arg.domain (socket) and evt.arg.request (ptrace): the constant's name, else the number. */
static int named_arg0(struct ctx *c, struct facts *f, int field, uint8_t *to)
{
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
	int n = fmt_dec(s, a0);
	return n > 0 && copy(c, (const uint8_t *)s, (uint32_t)n, to);
}

int rae_arg_value(struct ctx *c, struct facts *f, int field, uint8_t *to)
{
	switch (field) {
	case RAE_FLD_ARG_FLAGS: {
		uint32_t k = (f->cls >> RAE_NRC_FLAGS_SHIFT) & 0xf;
		if (k == RAE_NRC_FLAGS_AT2 || k == RAE_NRC_FLAGS_AT4)
			return at_flags(c, f->flags, to);
		if (k == RAE_NRC_FLAGS_EXEC)
			return exec_flags(c, f, to);
		return (f->cls & RAE_NRC_OPEN) && open_flags(c, f->flags, to);
	}
	case RAE_FLD_ARG_TARGET:
		return rae_raw_path(c, f, to);
	case RAE_FLD_ARG_NAME:
	case RAE_FLD_ARG_PATH:
	case RAE_FLD_ARG_FILENAME:
	case RAE_FLD_ARG_OLDPATH:
		return path_arg(c, f, field, to);
	case RAE_FLD_ARG_NEWPATH:
		return (f->cls & RAE_NRC_NEWPATH) && rae_new_path(c, f, to);
	case RAE_FLD_ARG_LINKPATH:
		return (f->cls & RAE_NRC_LINKPATH) && rae_new_path(c, f, to);
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
		return (f->cls & RAE_NRC_PTRACE) && text(c, s, fmt_dec(s, (int32_t)rd32(f->rec + offsetof(struct rae_syscall, args) + 8)), to);
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
		return text(c, s, fmt_dec(s, f->ret), to);
	}
	case RAE_FLD_ARG_CMD: {
		char s[16];
		return (f->cls & RAE_NRC_BPF) && text(c, s, fmt_dec(s, (int32_t)rd32(f->rec + offsetof(struct rae_syscall, args))), to);
	}
	case RAE_FLD_ARG_DOMAIN:
	case RAE_FLD_ARG_REQUEST:
		return named_arg0(c, f, field, to);
	default:
		return 0; /* evt.arg.uid: the host's (ingest/evt-arg.ts) */
	}
}
