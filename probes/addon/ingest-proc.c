// SPDX-License-Identifier: Apache-2.0
/*
 * The proc.*, thread.* and container.* fields the native translator writes into an eval record
 * (ingest-internal.h; libsinsp sinsp_filtercheck_thread): proc.duration (from the host's start
 * times), proc.env[NAME] (from the thread entry's environment), thread.tid and container.duration
 * (from the container entry's start). The other process and container fields live in the thread
 * and container entries the record points at. The TypeScript twins are
 * host/sources/syscall/ingest/proc.ts and container.ts.
 */
#include "ingest-internal.h"

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

int rae_proc_value(struct ctx *c, struct facts *f, int field, uint8_t *to)
{
	switch (field) {
	case RAE_FLD_DURATION: {
		if (!thread_entry(c, f))
			return 0;
		uint64_t i = (f->thread - RAE_STATE_THREADS) / RAE_THREAD_SIZE;
		if (i >= c->io->starts_len || c->io->starts[i] == 0)
			return 0;
		return num(to, (int64_t)(rd64(f->rec + offsetof(struct rae_hdr, ts_ns)) - c->io->starts[i]));
	}
	case RAE_FLD_CTR_DURATION: {
		/* the process's container entry (host/sources/container/table.ts) holds start_ts as epoch ns */
		const uint8_t *t = thread_entry(c, f);
		if (!t)
			return 0;
		uint32_t ctr = rd32(t + offsetof(struct rae_thread, ctr));
		if (ctr < RAE_STATE_CONTAINERS || (size_t)ctr + RAE_CTR_SIZE > c->io->mem_len || !(rd32(c->io->mem + ctr + RAE_CTR_PRESENT) & RAE_CP_START_TS))
			return 0;
		return num(to, (int64_t)(rd64(f->rec + offsetof(struct rae_hdr, ts_ns)) + c->epoch - rd64(c->io->mem + ctr + RAE_CTR_START_TS)));
	}
	case RAE_FLD_PROC_ENV:
		return env_value(c, f->thread, to);
	case RAE_FLD_TID:
		return num(to, rd32(f->rec + offsetof(struct rae_hdr, tid)));
	default:
		return 0;
	}
}
