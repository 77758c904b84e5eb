// SPDX-License-Identifier: GPL-2.0 OR Apache-2.0
/*
 * The kernel probe: CO-RE BPF programs that write the records of events.h into one ring buffer.
 *
 *   tp_btf/sys_exit            every syscall exit; a successful capset or set*id gives a RAE_KIND_CAPS
 *                              record of the caller's new credentials; syscalls whose number is not set in the
 *                              `interesting` table (filled by the addon) return at once; a
 *                              read-only open the rules cannot match (RAE_INT_PATHS: open_paths,
 *                              open_names; open-filter.bpf.h) is dropped after its path's copy. Records
 *                              carry all argument registers, the return value and, per syscall,
 *                              the strings and socket addresses behind pointer arguments.
 *   tp_btf/sched_process_exec  the new image: ids, credentials, tty, exe, argv, cwd, cgroup path,
 *                              environment (cfg_env); the process's name in proc_names.
 *   tp_btf/sched_process_fork  a new thread or process (ids + comm; the host inherits the rest); a
 *                              process's name in proc_names.
 *   tp_btf/sched_process_exit  a thread exit with its exit code; proc_names forgets the process.
 *
 * Wakeups follow a watermark: records are committed with BPF_RB_NO_WAKEUP except one that finds
 * the queued bytes at or past `cfg_wake_bytes` when its CPU looks (once per 1/16 of the watermark
 * it commits: wake_flags); the consumer also drains on a timeout.
 * x86-64 syscall numbers only; ia32 compat syscalls are recorded with RAE_SF_COMPAT, not decoded.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "events.h"
#include "helpers.bpf.h"
#include "syscalls.h"
#include "open-filter.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the addon before load. */
const volatile __u32 cfg_self_tgid = 0;
const volatile __u64 cfg_wake_bytes = 256 * 1024;
/* EXEC records carry the new image's environment (proc.env); 0 leaves it out (the bench's baseline). */
const volatile __u32 cfg_env = 1;
/* Bytes of a syscall's I/O buffer copied into its record (Falco's snaplen), at most RAE_MAX_DATA. */
const volatile __u32 cfg_snaplen = 80;

/* Per syscall number: RAE_INT_* bits (0 = not recorded), written by the addon through the mmapped .bss. */
__u8 interesting[RAE_NR_SYSCALLS];

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rae_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

/* Per CPU: bytes committed since this CPU last looked at the ring's fill (wake_flags). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} unlooked SEC(".maps");

static __always_inline struct rae_stats *get_stats(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&stats, &zero);
}

/*
 * Ring commit flags for a record of `len` bytes: wake the consumer once the queued bytes reach the
 * watermark. A CPU looks at the fill (bpf_ringbuf_query: a helper call, and loads of the positions
 * the consumer writes from another CPU) once per 1/16 of the watermark it commits rather than per
 * record, and wakes when the ring holds the watermark or more then: the wakeup comes at most that
 * many bytes per CPU late, and while the consumer lags behind the watermark a CPU repeats it at
 * most 16 times per watermark's worth of its records (the consumer drains what is queued at each).
 */
static __always_inline __u64 wake_flags(__u64 len)
{
	__u32 zero = 0;
	__u64 *unseen = bpf_map_lookup_elem(&unlooked, &zero);
	if (unseen) {
		*unseen += len;
		if (*unseen < cfg_wake_bytes >> 4)
			return BPF_RB_NO_WAKEUP;
		*unseen = 0;
	}
	__u64 queued = bpf_ringbuf_query(&ring, BPF_RB_AVAIL_DATA);
	return queued + len >= cfg_wake_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* Copies a record built in scratch to the ring, counting emitted or lost. */
static __always_inline void emit(void *rec, __u32 len)
{
	struct rae_stats *st = get_stats();
	if (len > RAE_MAX_RECORD - 8)
		len = RAE_MAX_RECORD - 8;
	len &= RAE_MAX_RECORD - 8; /* proves len <= 16376 to the verifier */
	if (len < sizeof(struct rae_hdr))
		return;
	((struct rae_hdr *)rec)->len = len;
	if (bpf_ringbuf_output(&ring, rec, len, wake_flags(len))) {
		if (st)
			st->lost++;
	} else if (st) {
		st->emitted++;
	}
}

static __always_inline void fill_hdr(struct rae_hdr *h, struct task_struct *t, __u16 kind, __u16 nr, __u32 pid,
				     __u32 tid)
{
	h->ts_ns = bpf_ktime_get_boot_ns();
	h->kind = kind;
	h->nr = nr;
	h->pid = pid;
	h->tid = tid;
	const struct cred *cred = t->cred; /* direct BTF loads: no helper call per field */
	h->uid = cred->euid.val;
	h->gid = cred->egid.val;
	/* what bpf_get_current_cgroup_id() returns (the default hierarchy's cgroup, its kernfs id),
	 * read without its call, and of `t`: a FORK record's child, whose cgroup differs from its
	 * parent's only when it was cloned into another one (clone3 CLONE_INTO_CGROUP) */
	h->cgroup_id = t->cgroups->dfl_cgrp->kn->id;
	h->ret = 0;
}

static __always_inline struct scratch *get_scratch(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&scratch_map, &zero);
}

/* What a syscall's pointer arguments mean: filled by plan_syscall(), executed by on_sys_exit. */
struct plan {
	const void *path;  /* user string -> rec.path */
	const void *path2; /* user string -> rec.path2 */
	long dirfd;        /* base of a relative `path`; RAE_NO_DIR = do not resolve */
	long dirfd2;
	const void *uaddr; /* user sockaddr -> rec.peer (or rec.local when uaddr_local) */
	const void *umsg;  /* user msghdr whose msg_name is the sockaddr */
	long sockfd;       /* socket whose tuple fills rec.local / rec.peer; -1 = none */
	int uaddr_local;
	int cwd_after;     /* rec.dir = cwd after the call (chdir, fchdir) */
};

#define RAE_NO_DIR (-1000000)

static __always_inline void plan_syscall(struct plan *p, __u32 nr, __u64 *a, long ret)
{
	switch (nr) {
	case NR_open: case NR_creat: case NR_chmod: case NR_mkdir: case NR_rmdir: case NR_unlink:
		p->path = (void *)a[0]; p->dirfd = AT_FDCWD; break;
	case NR_openat: case NR_openat2: case NR_fchmodat: case NR_fchmodat2: case NR_mkdirat: case NR_unlinkat:
		p->path = (void *)a[1]; p->dirfd = a[0]; break;
	case NR_execve:
		if (ret < 0) { p->path = (void *)a[0]; p->dirfd = AT_FDCWD; }
		break;
	case NR_execveat:
		if (ret < 0) { p->path = (void *)a[1]; p->dirfd = a[0]; }
		break;
	case NR_rename: case NR_link:
		p->path = (void *)a[0]; p->dirfd = AT_FDCWD; p->path2 = (void *)a[1]; p->dirfd2 = AT_FDCWD; break;
	case NR_renameat: case NR_renameat2: case NR_linkat:
		p->path = (void *)a[1]; p->dirfd = a[0]; p->path2 = (void *)a[3]; p->dirfd2 = a[2]; break;
	case NR_symlink:
		p->path = (void *)a[0]; p->path2 = (void *)a[1]; p->dirfd2 = AT_FDCWD; break;
	case NR_symlinkat:
		p->path = (void *)a[0]; p->path2 = (void *)a[2]; p->dirfd2 = a[1]; break;
	case NR_init_module:
		p->path = (void *)a[2]; break;
	case NR_finit_module:
		p->path = (void *)a[1]; break;
	case NR_memfd_create:
		p->path = (void *)a[0]; break;
	case NR_chdir:
		p->path = (void *)a[0]; p->cwd_after = 1; break;
	case NR_fchdir:
		p->cwd_after = 1; break;
	case NR_connect:
		p->uaddr = (void *)a[1]; p->sockfd = a[0]; break;
	case NR_bind:
		p->uaddr = (void *)a[1]; p->uaddr_local = 1; p->sockfd = a[0]; break;
	case NR_accept: case NR_accept4:
		p->sockfd = ret; break;
	case NR_dup: case NR_dup2: case NR_dup3:
		/* the new fd is the old one's file: a socket's facts, as libsinsp copies the old fd's
		 * info to the new one (parsers.cpp parse_dup_exit) and the event reads it */
		if (ret >= 0) p->sockfd = ret;
		break;
	case NR_sendto:
		p->uaddr = (void *)a[4]; p->sockfd = a[0]; break;
	case NR_recvfrom:
		if (ret >= 0) p->uaddr = (void *)a[4];
		p->sockfd = a[0]; break;
	case NR_sendmsg:
		p->umsg = (void *)a[1]; p->sockfd = a[0]; break;
	case NR_recvmsg:
		if (ret >= 0) p->umsg = (void *)a[1];
		p->sockfd = a[0]; break;
	case NR_listen: case NR_shutdown: case NR_getsockopt: case NR_setsockopt:
		p->sockfd = a[0]; break;
	}
}

/* Where a read/write-family syscall's I/O buffer is: a buffer, or an iovec array, and its byte count. */
struct data_plan {
	const void *buf;
	const struct iovec *iov;
	__u64 iovcnt;
	__u64 count;
};

/*
 * The I/O buffer libsinsp gives the syscall's exit event as its `data` parameter (the modern
 * probe's read_x, write_x, recvfrom_x, sendto_x... in driver/modern_bpf): data read is there only
 * when the call returned bytes (ret > 0, that many); data written is the bytes written, or the
 * bytes the caller passed when the call failed. The record gets the first cfg_snaplen of them.
 */
static __always_inline void plan_data(struct data_plan *d, __u32 nr, __u64 *a, long ret)
{
	int writes = 0;
	switch (nr) {
	case DNR_write: case DNR_pwrite64: case NR_sendto:
		writes = 1;
		/* fall through */
	case DNR_read: case DNR_pread64: case NR_recvfrom:
		d->buf = (void *)a[1];
		d->count = ret > 0 ? ret : writes ? a[2] : 0;
		break;
	case DNR_writev: case DNR_pwritev:
		writes = 1;
		/* fall through */
	case DNR_readv: case DNR_preadv:
		d->iov = (void *)a[1];
		d->iovcnt = a[2];
		d->count = ret > 0 ? ret : writes ? ~0ull : 0;
		break;
	case NR_sendmsg:
		writes = 1;
		/* fall through */
	case NR_recvmsg: {
		struct user_msghdr m = {};
		if (bpf_probe_read_user(&m, sizeof(m), (void *)a[1]))
			break;
		d->iov = (void *)m.msg_iov;
		d->iovcnt = m.msg_iovlen;
		d->count = ret > 0 ? ret : writes ? ~0ull : 0;
		break;
	}
	}
	if (d->count > cfg_snaplen)
		d->count = cfg_snaplen;
}

/* A relative path (non-empty, not starting with '/') needs its base directory. */
static __always_inline int is_relative(__u8 *rec, struct rae_str *s)
{
	return s->len > 0 && rec[s->off & REC_MASK] != '/';
}

/* x86-64 capset(2): libsinsp updates a thread's sets on its exit event (parsers.cpp parse_capset_exit). */
#define RAE_NR_CAPSET 126
/* x86-64 setfsuid/setfsgid: they return the previous id, so every exit is recorded. */
#define RAE_NR_SETFSUID 122
#define RAE_NR_SETFSGID 123

/*
 * Whether the exit of syscall `nr` returning `ret` changed the caller's credentials: a successful
 * capset or set*id (libsinsp updates the thread's user and group on the exit of setuid, setgid,
 * setreuid, setregid, setresuid and setresgid: parsers.cpp parse_setuid_exit and its siblings).
 */
static __always_inline int creds_changed(__u32 nr, long ret)
{
	switch (nr) {
	case RAE_NR_CAPSET: case NR_setuid: case NR_setgid: case NR_setreuid: case NR_setregid:
	case NR_setresuid: case NR_setresgid:
		return ret == 0;
	case RAE_NR_SETFSUID: case RAE_NR_SETFSGID:
		return 1;
	}
	return 0;
}

/*
 * A RAE_KIND_CAPS record of the current task's credentials after capset or a set*id call: the
 * header's uid/gid are the new effective ids, the body the new capability sets.
 */
static __always_inline int emit_caps(__u32 nr)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if ((pid_tgid >> 32) == cfg_self_tgid)
		return 0;
	struct task_struct *t = bpf_get_current_task_btf();
	struct rae_caps r = {};
	fill_hdr(&r.hdr, t, RAE_KIND_CAPS, nr, pid_tgid >> 32, (__u32)pid_tgid);
	const struct cred *c = BPF_CORE_READ(t, cred);
	BPF_CORE_READ_INTO(&r.cap_inheritable, c, cap_inheritable);
	BPF_CORE_READ_INTO(&r.cap_permitted, c, cap_permitted);
	BPF_CORE_READ_INTO(&r.cap_effective, c, cap_effective);
	r.hdr.len = sizeof(r);
	struct rae_stats *st = get_stats();
	if (bpf_ringbuf_output(&ring, &r, sizeof(r), wake_flags(sizeof(r)))) {
		if (st)
			st->lost++;
	} else if (st) {
		st->emitted++;
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	__u32 nr = regs->orig_ax;
	if (creds_changed(nr, ret))
		emit_caps(nr);
	if (nr >= RAE_NR_SYSCALLS)
		return 0;
	__u8 want = interesting[nr];
	if (!want)
		return 0; /* the common case: as little as possible before this */
	/* the ids by direct loads from the task, not bpf_get_current_pid_tgid(): a helper call costs
	 * more than the loads (its return goes through the CPU's return-thunk mitigation) */
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 pid = t->tgid, tid = t->pid;
	if (pid == cfg_self_tgid)
		return 0;
	struct scratch *s = get_scratch();
	struct rae_stats *st = get_stats();
	if (!s)
		return 0;
	if (st)
		st->seen++;
	__u8 *rec = s->rec;
	struct rae_syscall *r = (void *)rec;
	__builtin_memset(r, 0, sizeof(*r));
	__u64 a[6];
	a[0] = regs->di;
	a[1] = regs->si;
	a[2] = regs->dx;
	a[3] = regs->r10;
	a[4] = regs->r8;
	a[5] = regs->r9;
	__builtin_memcpy(r->args, a, sizeof(a));
	if (t->thread_info.status & 0x2 /* TS_COMPAT */) {
		fill_hdr(&r->hdr, t, RAE_KIND_SYSCALL, nr, pid, tid);
		r->hdr.ret = ret;
		r->sflags = RAE_SF_COMPAT;
		emit(rec, sizeof(*r));
		return 0;
	}

	struct plan p = { .dirfd = RAE_NO_DIR, .dirfd2 = RAE_NO_DIR, .sockfd = -1 };
	plan_syscall(&p, nr, a, ret);
	__u32 pos = sizeof(*r);
	if (nr == NR_openat2) {
		struct open_how how = {};
		bpf_probe_read_user(&how, sizeof(how), (void *)a[2]);
		r->aux[0] = how.flags;
		r->aux[1] = how.mode;
		r->resolve = how.resolve;
	}
	pos = put_user_str(rec, pos, p.path, &r->path, &r->sflags);
	if ((want & RAE_INT_PATHS) && ret >= 0 && unwanted_open(rec, r, nr, a, pid))
		return 0;
	/* the header after the filter: its clock and cgroup reads are spared for a dropped open */
	fill_hdr(&r->hdr, t, RAE_KIND_SYSCALL, nr, pid, tid);
	r->hdr.ret = ret;
	pos = put_user_str(rec, pos, p.path2, &r->path2, &r->sflags);
	if (p.cwd_after && ret == 0)
		pos = put_dir(rec, pos, s->walk, t, AT_FDCWD, &r->dir, &r->sflags);
	else if (p.dirfd != RAE_NO_DIR && is_relative(rec, &r->path))
		pos = put_dir(rec, pos, s->walk, t, p.dirfd, &r->dir, &r->sflags);
	if (p.dirfd2 != RAE_NO_DIR && is_relative(rec, &r->path2))
		pos = put_dir(rec, pos, s->walk, t, p.dirfd2, &r->dir2, &r->sflags);
	if (p.umsg)
		bpf_probe_read_user(&p.uaddr, sizeof(p.uaddr), p.umsg); /* msg_name is the first member */
	if (p.uaddr)
		pos = put_user_sockaddr(rec, pos, p.uaddr, p.uaddr_local ? &r->local : &r->peer, &r->path, &r->sflags);
	if (p.sockfd >= 0) {
		struct rae_sockaddr keep = r->local;
		pos = put_sock_tuple(rec, pos, fd_file(t, p.sockfd), &r->peer, &r->local, &r->path, &r->sock_type);
		if (p.uaddr_local && ret < 0)
			r->local = keep; /* failed bind: the requested address; else the bound one */
	}
	if (want & RAE_INT_DATA) {
		struct data_plan d = {};
		plan_data(&d, nr, a, ret);
		pos = put_user_data(rec, pos, d.buf, d.iov, d.iovcnt, d.count, &r->data);
	}
	if ((r->sflags & RAE_SF_PATH_TRUNC) && st)
		st->truncated++;
	emit(rec, (pos + 7) & ~7u);
	return 0;
}

/*
 * The capability sets of `t`'s credentials (thread.cap_*; libsinsp takes them from the execve and
 * clone exit events). kernel_cap_t is {u64 val} since 6.3 and {u32 cap[2]} before: both are 8
 * little-endian bytes with capability N at bit N, so one 8-byte read fits either.
 */
static __always_inline void fill_caps(struct rae_proc *r, struct task_struct *t)
{
	const struct cred *c = BPF_CORE_READ(t, cred);
	BPF_CORE_READ_INTO(&r->cap_inheritable, c, cap_inheritable);
	BPF_CORE_READ_INTO(&r->cap_permitted, c, cap_permitted);
	BPF_CORE_READ_INTO(&r->cap_effective, c, cap_effective);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if ((pid_tgid >> 32) == cfg_self_tgid)
		return 0;
	struct scratch *s = get_scratch();
	if (!s)
		return 0;
	__u8 *rec = s->rec;
	struct rae_proc *r = (void *)rec;
	struct task_struct *t = bpf_get_current_task_btf();
	__builtin_memset(r, 0, sizeof(*r));
	fill_hdr(&r->hdr, t, RAE_KIND_EXEC, 0, pid_tgid >> 32, (__u32)pid_tgid);
	fill_proc(r, t);
	fill_caps(r, t);
	__u32 pos = sizeof(*r);
	/* the task's comm after the exec: the EXEC record's, which becomes the table's proc.name */
	struct rae_comm comm = {};
	bpf_get_current_comm(comm.c, sizeof(comm.c));
	set_proc_name(pid_tgid >> 32, &comm);
	pos = put_kernel_str(rec, pos, comm.c, &r->comm);
	pos = put_kernel_str(rec, pos, BPF_CORE_READ(bprm, filename), &r->exe);
	struct file *exe = BPF_CORE_READ(t, mm, exe_file);
	pos = put_path(rec, pos, s->walk, BPF_CORE_READ(exe, f_path.mnt), BPF_CORE_READ(exe, f_path.dentry),
		       &r->exepath, &r->pflags, RAE_PF_PATH_TRUNC);
	if (exe_writable(exe, r->hdr.uid, r->hdr.gid))
		r->pflags |= RAE_PF_EXE_WRITABLE;
	r->pflags |= exe_overlay_layer(exe);
	exe_times(exe, r);
	pos = put_args(rec, pos, t, &r->args, &r->pflags);
	pos = put_dir(rec, pos, s->walk, t, AT_FDCWD, &r->cwd, &r->pflags);
	pos = put_cgroup(rec, pos, s->walk, t, &r->cgroup);
	if (cfg_env)
		pos = put_env(rec, pos, t, &r->env, &r->pflags);
	if (r->pflags & (RAE_PF_ARGS_TRUNC | RAE_PF_PATH_TRUNC | RAE_PF_ENV_TRUNC)) {
		struct rae_stats *st = get_stats();
		if (st)
			st->truncated++;
	}
	emit(rec, (pos + 7) & ~7u);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 pid = BPF_CORE_READ(child, tgid);
	__u32 tid = BPF_CORE_READ(child, pid);
	if (pid == cfg_self_tgid)
		return 0;
	struct scratch *s = get_scratch();
	if (!s)
		return 0;
	__u8 *rec = s->rec;
	struct rae_proc *r = (void *)rec;
	__builtin_memset(r, 0, sizeof(*r));
	fill_hdr(&r->hdr, child, RAE_KIND_FORK, 0, pid, tid);
	fill_proc(r, child);
	fill_caps(r, child);
	if (pid != tid)
		r->pflags |= RAE_PF_THREAD;
	__u32 pos = sizeof(*r);
	struct rae_comm comm = {};
	BPF_CORE_READ_STR_INTO(&comm.c, child, comm);
	/* a new process's name in the table is its FORK record's comm; a thread's FORK leaves its
	 * process's entry as it is */
	if (pid == tid)
		set_proc_name(pid, &comm);
	pos = put_kernel_str(rec, pos, comm.c, &r->comm);
	emit(rec, (pos + 7) & ~7u);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if ((pid_tgid >> 32) == cfg_self_tgid)
		return 0;
	struct rae_stats *st = get_stats();
	__u64 flags = wake_flags(sizeof(struct rae_exit));
	struct rae_exit *r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);
	if (!r) {
		if (st)
			st->lost++;
		return 0;
	}
	fill_hdr(&r->hdr, p, RAE_KIND_EXIT, 0, pid_tgid >> 32, (__u32)pid_tgid);
	r->hdr.len = sizeof(*r);
	r->hdr.ret = BPF_CORE_READ(p, exit_code);
	r->xflags = BPF_CORE_READ(p, signal, live.counter) == 0 ? RAE_XF_GROUP_DEAD : 0;
	/* the table forgets the process when its leader thread or its last thread exits (EXIT records
	 * with tid == pid or GROUP_DEAD); threads living on are looked up in /proc again there, so the
	 * name is a tombstone here (every open kept) until the last one exits */
	__u32 pid = pid_tgid >> 32;
	if (r->xflags & RAE_XF_GROUP_DEAD) {
		bpf_map_delete_elem(&proc_names, &pid);
	} else if (pid == (__u32)pid_tgid) {
		struct rae_comm gone = { .c = { [RAE_COMM_BYTES - 1] = 1 } };
		set_proc_name(pid, &gone);
	}
	r->_pad = 0;
	bpf_ringbuf_submit(r, flags);
	if (st)
		st->emitted++;
	return 0;
}
