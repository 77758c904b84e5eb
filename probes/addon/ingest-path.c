// SPDX-License-Identifier: Apache-2.0
/*
 * fd.name and the path parameters of the native translator (ingest-internal.h): fd.name copied
 * into the string area on first use, the first path as passed, the second path joined with its
 * directory, and Node's posix.normalize of an absolute path, as ingest/facts.ts and
 * ingest/evt-arg.ts do it in TypeScript.
 */
#include "ingest-internal.h"

int rae_fd_name(struct ctx *c, struct facts *f, uint8_t *to)
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

/* The first path as passed (evt.arg.target, fd.nameraw of an open, unresolved path parameters). */
int rae_raw_path(struct ctx *c, struct facts *f, uint8_t *to)
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

/* evt.arg.newpath: the second path, a relative one joined with dir2 and normalized (libsinsp PT_FSPATH). */
int rae_new_path(struct ctx *c, struct facts *f, uint8_t *to)
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
	if (m[0] == '/' && rae_needs_normalize(m, n)) {
		uint32_t nat = alloc(c, n);
		if (!nat)
			return 0;
		n = rae_normalize(m, n, c->io->mem + nat);
		at = nat;
	}
	return ref(to, at, n);
}

/* Whether an absolute path has '//', '.' or '..' components (posix.normalize would change it). */
int rae_needs_normalize(const uint8_t *s, uint32_t len)
{
	/* from '/' to '/' with memchr, not a byte at a time: every open's fd.name is checked */
	if (len < 2)
		return 0;
	const uint8_t *last = s + len - 1; /* a '/' here ends the path: nothing follows it */
	for (const uint8_t *p = s; p < last && (p = memchr(p, '/', (size_t)(last - p))) != NULL; p++)
		if (p[1] == '/' || p[1] == '.')
			return 1;
	return 0;
}

/* Node's posix.normalize of an absolute path into d (room for len bytes); returns the length. */
uint32_t rae_normalize(const uint8_t *s, uint32_t len, uint8_t *d)
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
