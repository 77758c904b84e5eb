// SPDX-License-Identifier: Apache-2.0
/*
 * Native kernel-record translator (see ingest.h): one pass over a batch of wire records writing
 * one eval record per SYSCALL record, with the exact semantics of the TypeScript oracle
 * (host/sources/syscall/ingest/: open flags per syscall, fd.name joined with the record's
 * directory, endpoints by side, errno names, IPv4 tuple names, the evt.arg.* parameters by
 * syscall class (pid/dirfd/res/linkpath too), proc.env[NAME] from the thread entry's environment
 * (env-index.ts layout); setuid records stop the pass when evt.arg.uid is read, the host names
 * users; with RAE_IS_LOOKUP a record of a process without a thread entry stops it until the host
 * has read that process). This file is the pass, a record's facts and the dispatch of each slot
 * to its field class (ingest-internal.h lists the files of each). Strings are copied into the
 * batch's string area; nothing is allocated. Every write into linear memory is bounds-checked
 * against the plan's regions.
 */
#include "ingest-internal.h"
#include "../src/syscalls.h"

/* An absent socket end (family 0): ip() and port() find nothing in it. */
static const uint8_t NO_END[sizeof(struct rae_sockaddr)];

/* The field classes (ingest-internal.h lists the writer of each); 0 = no writer here. */
enum { CLASS_NONE, CLASS_EVT, CLASS_ARG, CLASS_FD, CLASS_PROC };

/* The field class of each field id, as libsinsp's filterchecks split them. */
static const uint8_t CLASS_OF[RAE_FLD_COUNT] = {
	[RAE_FLD_NUM] = CLASS_EVT, [RAE_FLD_RAWRES] = CLASS_EVT, [RAE_FLD_RES] = CLASS_EVT,
	[RAE_FLD_FAILED] = CLASS_EVT, [RAE_FLD_READ] = CLASS_EVT, [RAE_FLD_WRITE] = CLASS_EVT,
	[RAE_FLD_CREATE] = CLASS_EVT, [RAE_FLD_OPEN_EXEC] = CLASS_EVT, [RAE_FLD_TIME] = CLASS_EVT,
	[RAE_FLD_RAWTIME] = CLASS_EVT, [RAE_FLD_DIRECTION] = CLASS_EVT, [RAE_FLD_SOURCE] = CLASS_EVT,
	[RAE_FLD_HOSTNAME] = CLASS_EVT, [RAE_FLD_BUFFER] = CLASS_EVT, [RAE_FLD_ARG_DATA] = CLASS_EVT,

	[RAE_FLD_ARG_FLAGS] = CLASS_ARG, [RAE_FLD_ARG_TARGET] = CLASS_ARG, [RAE_FLD_ARG_NAME] = CLASS_ARG,
	[RAE_FLD_ARG_PATH] = CLASS_ARG, [RAE_FLD_ARG_FILENAME] = CLASS_ARG, [RAE_FLD_ARG_OLDPATH] = CLASS_ARG,
	[RAE_FLD_ARG_NEWPATH] = CLASS_ARG, [RAE_FLD_ARG_MODE] = CLASS_ARG, [RAE_FLD_ARG_FD] = CLASS_ARG,
	[RAE_FLD_ARG_UID] = CLASS_ARG, [RAE_FLD_ARG_CMD] = CLASS_ARG, [RAE_FLD_ARG_PID] = CLASS_ARG,
	[RAE_FLD_ARG_DIRFD] = CLASS_ARG, [RAE_FLD_ARG_RES] = CLASS_ARG, [RAE_FLD_ARG_LINKPATH] = CLASS_ARG,
	[RAE_FLD_ARG_DOMAIN] = CLASS_ARG, [RAE_FLD_ARG_REQUEST] = CLASS_ARG,

	[RAE_FLD_FDNUM] = CLASS_FD, [RAE_FLD_NAME] = CLASS_FD, [RAE_FLD_NAMERAW] = CLASS_FD,
	[RAE_FLD_DIR] = CLASS_FD, [RAE_FLD_FILE] = CLASS_FD, [RAE_FLD_TYPECHAR] = CLASS_FD,
	[RAE_FLD_TYPE] = CLASS_FD, [RAE_FLD_FAMILY] = CLASS_FD, [RAE_FLD_SIP] = CLASS_FD,
	[RAE_FLD_CIP] = CLASS_FD, [RAE_FLD_LIP] = CLASS_FD, [RAE_FLD_RIP] = CLASS_FD,
	[RAE_FLD_SPORT] = CLASS_FD, [RAE_FLD_CPORT] = CLASS_FD, [RAE_FLD_LPORT] = CLASS_FD,
	[RAE_FLD_RPORT] = CLASS_FD, [RAE_FLD_IPS] = CLASS_FD, [RAE_FLD_PORTS] = CLASS_FD,
	[RAE_FLD_L4PROTO] = CLASS_FD, [RAE_FLD_CONNECTED] = CLASS_FD, [RAE_FLD_NAME_CHANGED] = CLASS_FD,
	[RAE_FLD_SIP_NAME] = CLASS_FD, [RAE_FLD_CIP_NAME] = CLASS_FD, [RAE_FLD_LIP_NAME] = CLASS_FD,
	[RAE_FLD_RIP_NAME] = CLASS_FD,

	[RAE_FLD_DURATION] = CLASS_PROC, [RAE_FLD_PROC_ENV] = CLASS_PROC, [RAE_FLD_TID] = CLASS_PROC,
	[RAE_FLD_CTR_DURATION] = CLASS_PROC,
};

/*
 * The 8 bytes of `field` at `to`, by its class's writer; 0 when the record does not provide it.
 * A switch of direct calls, not a table of function pointers: each writer has this one call site,
 * so the link-time optimizer inlines it into the pass (binding.gyp: -flto; the writers are hidden,
 * ingest-internal.h). Called through pointers, or out of line, the writers of a record's fields
 * (up to 19 an open record with the default rules) cost the pass 13-20 % (issue #26).
 */
static inline int value(struct ctx *c, struct facts *f, int field, uint8_t *to)
{
	switch (CLASS_OF[field]) {
	case CLASS_EVT: return rae_evt_value(c, f, field, to);
	case CLASS_ARG: return rae_arg_value(c, f, field, to);
	case CLASS_FD: return rae_fd_value(c, f, field, to);
	case CLASS_PROC: return rae_proc_value(c, f, field, to);
	default: return 0;
	}
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
	f->slash = -2;
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
	if (f->has_name && f->name_len > 0 && f->name[0] == '/' && rae_needs_normalize(f->name, f->name_len)) {
		uint32_t at = alloc(c, f->name_len);
		if (at) {
			f->name_len = rae_normalize(f->name, f->name_len, c->io->mem + at);
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
	if (fk == RAE_NRC_FLAGS_AT2 || fk == RAE_NRC_FLAGS_AT4 || (fk == RAE_NRC_FLAGS_EXEC && f->thread))
		can |= BIT(RAE_FLD_ARG_FLAGS);
	if (f->cls & RAE_NRC_PTRACE)
		can |= BIT(RAE_FLD_ARG_REQUEST);
	int pk = rae_path_field[(f->cls >> RAE_NRC_PATHARG_SHIFT) & 7];
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
	c.evt_num = (int64_t)st[RAE_IS_NUM];
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
			c.evt_num++;
			if (nslots) {
				struct facts f;
				facts(&c, &f, rec, len, nr);
				f.thread = thread;
				uint64_t can = possible(&f);
				uint64_t same = 0;
				if (prev && nr == prev_nr && f.ret == prev_ret && f.flags == prev_flags && f.fam == prev_fam)
					same = STABLE | ((f.cls & RAE_NRC_FD_RET) ? BIT(RAE_FLD_FDNUM) : 0);
				/* an execve's evt.arg.flags is its thread's, not the record's: never copied */
				if (((f.cls >> RAE_NRC_FLAGS_SHIFT) & 0xf) == RAE_NRC_FLAGS_EXEC)
					same &= ~BIT(RAE_FLD_ARG_FLAGS);
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
						set = value(&c, &f, field, e + slots[3 * j + 1]);
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
	st[RAE_IS_NUM] = (double)c.evt_num;
	st[RAE_IS_CONST] = (double)c.konst;
	st[RAE_IS_STOP] = stop;
	return (long)off;
}
