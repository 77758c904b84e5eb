/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * Helpers for probe.bpf.c: string placement into a record's string area, a bounded dentry walk
 * that turns a struct path into an absolute path (crossing mounts), fd -> struct file lookup and
 * socket tuples, and task facts (ids, namespaces, tty, cgroup path).
 *
 * Every helper writes into per-CPU scratch (map values), with offsets masked so the verifier can
 * prove every access stays inside the value; lengths are capped by the constants in events.h.
 */
#ifndef RAE_HELPERS_BPF_H
#define RAE_HELPERS_BPF_H

#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define AT_FDCWD -100
#define WALK_DEPTH 32
#define REC_MASK (RAE_MAX_RECORD - 1)
#define PATH_MASK (RAE_MAX_PATH - 1)
#define DATA_MASK (2 * RAE_MAX_DATA - 1) /* bounds a data copy's size for the verifier (it is at most RAE_MAX_DATA) */
#define RAE_MAX_IOV 8                    /* iovec entries read for one syscall's data */

/* Per-CPU scratch: the record under construction (with slack for a masked write at its end: a
 * data copy is masked with DATA_MASK) and a buffer for dentry walks, which assemble paths backwards. */
struct scratch {
	__u8 rec[RAE_MAX_RECORD + 2 * RAE_MAX_DATA];
	__u8 walk[2 * RAE_MAX_PATH];
};

/* Layouts of older kernels, for CO-RE field checks. */
struct kernfs_node___old {
	struct kernfs_node *parent;
};
/* struct inode's times: timespec64 i_ctime/i_mtime before 6.6, __i_ctime from 6.6 and __i_mtime
 * from 6.7, then i_ctime_sec/_nsec and i_mtime_sec/_nsec from 6.11 (vmlinux.h). */
struct inode___v6_6 {
	struct timespec64 __i_ctime;
};
struct inode___v6_7 {
	struct timespec64 __i_mtime;
};
struct inode___old {
	struct timespec64 i_ctime;
	struct timespec64 i_mtime;
};

/* Copies a NUL-terminated user string to rec[pos..]; returns the new pos. */
static __always_inline __u32 put_user_str(__u8 *rec, __u32 pos, const void *uptr, struct rae_str *ref,
					  __u32 *flags)
{
	if (!uptr)
		return pos;
	if (pos > RAE_MAX_RECORD - RAE_MAX_PATH) {
		*flags |= RAE_SF_PATH_TRUNC;
		return pos;
	}
	long n = bpf_probe_read_user_str(rec + (pos & REC_MASK), RAE_MAX_PATH, uptr);
	if (n <= 0) {
		*flags |= RAE_SF_PATH_FAULT;
		return pos;
	}
	if (n == RAE_MAX_PATH)
		*flags |= RAE_SF_PATH_TRUNC;
	ref->off = pos;
	ref->len = n - 1;
	return pos + n;
}

/*
 * The first `n` bytes of a syscall's I/O buffer into rec[pos..] as `ref` (a NUL follows): the user
 * buffer `ubuf`, or the buffers of the `iovcnt` entries of the user iovec array `iov` in order (at
 * most RAE_MAX_IOV of them). A buffer that cannot be read ends the copy. Returns the new pos.
 */
static __always_inline __u32 put_user_data(__u8 *rec, __u32 pos, const void *ubuf, const struct iovec *iov, __u64 iovcnt,
					   __u64 n, struct rae_str *ref)
{
	if (n == 0 || pos > RAE_MAX_RECORD - RAE_MAX_DATA - 8)
		return pos;
	if (n > RAE_MAX_DATA)
		n = RAE_MAX_DATA;
	/* hides pos's range from clang, which would drop the masks below for it and leave the verifier an unbounded offset */
	asm volatile("" : "+r"(pos));
	__u32 got = 0;
	if (!iov) {
		if (bpf_probe_read_user(rec + (pos & REC_MASK), n & DATA_MASK, ubuf))
			return pos;
		got = n;
	} else {
		for (int i = 0; i < RAE_MAX_IOV; i++) {
			struct iovec v = {};
			if (i >= iovcnt || got >= n || bpf_probe_read_user(&v, sizeof(v), &iov[i]))
				break;
			__u64 chunk = v.iov_len < n - got ? v.iov_len : n - got;
			if (chunk && bpf_probe_read_user(rec + ((pos + got) & REC_MASK), chunk & DATA_MASK, v.iov_base))
				break;
			got += chunk;
		}
	}
	got &= DATA_MASK;
	rec[(pos + got) & REC_MASK] = 0;
	ref->off = pos;
	ref->len = got;
	return pos + got + 1;
}

/* Copies a NUL-terminated kernel string (at most RAE_MAX_PATH with its NUL) to rec[pos..]. */
static __always_inline __u32 put_kernel_str(__u8 *rec, __u32 pos, const void *kptr, struct rae_str *ref)
{
	if (!kptr || pos > RAE_MAX_RECORD - RAE_MAX_PATH)
		return pos;
	long n = bpf_probe_read_kernel_str(rec + (pos & REC_MASK), RAE_MAX_PATH, kptr);
	if (n <= 0)
		return pos;
	ref->off = pos;
	ref->len = n - 1;
	return pos + n;
}

/* State of one dentry walk, advanced by walk_step() under bpf_loop (verified once, not per step). */
struct walk_ctx {
	struct vfsmount *vm;
	struct mount *mnt;
	struct dentry *d;
	__u8 *walk;
	__u32 pos;
	int complete;
};

static long walk_step(__u32 i, struct walk_ctx *c)
{
	struct vfsmount *vm = c->vm;
	struct mount *mnt = c->mnt;
	struct dentry *d = c->d;
	struct dentry *root = BPF_CORE_READ(vm, mnt_root);
	struct dentry *parent = BPF_CORE_READ(d, d_parent);
	if (d == root || d == parent) {
		struct mount *mp = BPF_CORE_READ(mnt, mnt_parent);
		if (!mp || mp == mnt) {
			c->complete = 1;
			return 1;
		}
		c->d = BPF_CORE_READ(mnt, mnt_mountpoint);
		c->mnt = mp;
		c->vm = (void *)mp + bpf_core_field_offset(struct mount, mnt);
		return 0;
	}
	__u32 len = BPF_CORE_READ(d, d_name.len) & 255;
	const unsigned char *name = BPF_CORE_READ(d, d_name.name);
	__u32 pos = c->pos;
	__u8 *walk = c->walk;
	if (!walk || len + 1 >= pos || pos > RAE_MAX_PATH - 1)
		return 1;
	pos -= len;
	bpf_probe_read_kernel(walk + (pos & PATH_MASK), len, name);
	pos -= 1;
	walk[pos & PATH_MASK] = '/';
	c->pos = pos;
	c->d = parent;
	return 0;
}

/* Walks dentry -> root, crossing mount points, writing "/a/b/c\0" so that it ends at
 * walk[RAE_MAX_PATH - 1]. Returns the start index, or -1 when the walk did not reach the root. */
static __always_inline int walk_path(struct vfsmount *vm, struct dentry *d, __u8 *walk)
{
	struct walk_ctx c = {
		.vm = vm,
		.mnt = (void *)vm - bpf_core_field_offset(struct mount, mnt),
		.d = d,
		.walk = walk,
		.pos = RAE_MAX_PATH - 1,
	};
	walk[PATH_MASK] = 0;
	bpf_loop(WALK_DEPTH, walk_step, &c, 0);
	__u32 pos = c.pos;
	if (pos == RAE_MAX_PATH - 1) {
		pos -= 1;
		walk[pos & PATH_MASK] = '/';
	}
	return c.complete ? (int)(pos & PATH_MASK) : -1;
}

/* Puts the absolute path of `p` into rec[pos..]; returns the new pos. */
static __always_inline __u32 put_path(__u8 *rec, __u32 pos, __u8 *walk, struct vfsmount *vm, struct dentry *d,
				      struct rae_str *ref, __u32 *flags, __u32 trunc_flag)
{
	if (!vm || !d || pos > RAE_MAX_RECORD - RAE_MAX_PATH)
		return pos;
	/*
	 * A pseudo file below no directory (memfd_create's "memfd:<name>", an anonymous inode): its
	 * dentry is its own parent without being the mount's root. The walk would give "/"; libsinsp's
	 * exepath is the name as it stands ("memfd:<name>", no " (deleted)": the driver's
	 * trusted_exepath, parsers.cpp parse_execve_exit "Parameter 28", which the stable macro
	 * known_memfd_execution_processes compares with "memfd:runc_cloned:/proc/self/exe").
	 */
	if (d != BPF_CORE_READ(vm, mnt_root) && d == BPF_CORE_READ(d, d_parent)) {
		long n = bpf_probe_read_kernel_str(rec + (pos & REC_MASK), 256, BPF_CORE_READ(d, d_name.name));
		if (n <= 1)
			return pos;
		ref->off = pos;
		ref->len = n - 1;
		return pos + n;
	}
	int start = walk_path(vm, d, walk);
	if (start < 0) {
		*flags |= trunc_flag;
		return pos;
	}
	__u32 n = RAE_MAX_PATH - (__u32)start; /* NUL included */
	if (n > RAE_MAX_PATH || n < 2)
		return pos;
	bpf_probe_read_kernel(rec + (pos & REC_MASK), n & (2 * RAE_MAX_PATH - 1), walk + (start & PATH_MASK));
	ref->off = pos;
	ref->len = n - 1;
	return pos + n;
}

/* The struct file behind a descriptor of `t`, or NULL. */
static __always_inline struct file *fd_file(struct task_struct *t, long fd)
{
	if (fd < 0)
		return NULL;
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	if (!fdt || (unsigned long)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	struct file **arr = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;
	bpf_probe_read_kernel(&f, sizeof(f), &arr[fd & 0xfffff]);
	return f;
}

/* Directory `dirfd` refers to (AT_FDCWD: the cwd) as an absolute path into rec[pos..]. */
static __always_inline __u32 put_dir(__u8 *rec, __u32 pos, __u8 *walk, struct task_struct *t, long dirfd,
				     struct rae_str *ref, __u32 *flags)
{
	struct vfsmount *vm;
	struct dentry *d;
	if ((int)dirfd == AT_FDCWD) {
		vm = BPF_CORE_READ(t, fs, pwd.mnt);
		d = BPF_CORE_READ(t, fs, pwd.dentry);
	} else {
		struct file *f = fd_file(t, (int)dirfd);
		if (!f)
			return pos;
		vm = BPF_CORE_READ(f, f_path.mnt);
		d = BPF_CORE_READ(f, f_path.dentry);
	}
	return put_path(rec, pos, walk, vm, d, ref, flags, RAE_SF_PATH_TRUNC);
}

/* Reads a user sockaddr into `sa`; AF_UNIX paths go to rec[pos..] as `path`. Returns the new pos. */
static __always_inline __u32 put_user_sockaddr(__u8 *rec, __u32 pos, const void *uaddr, struct rae_sockaddr *sa,
					       struct rae_str *path, __u32 *flags)
{
	__u16 family = 0;
	if (!uaddr || bpf_probe_read_user(&family, sizeof(family), uaddr))
		return pos;
	if (family == AF_INET) {
		struct sockaddr_in in = {};
		bpf_probe_read_user(&in, sizeof(in), uaddr);
		sa->family = AF_INET;
		sa->port = bpf_ntohs(in.sin_port);
		__builtin_memcpy(sa->addr, &in.sin_addr, 4);
	} else if (family == AF_INET6) {
		struct sockaddr_in6 in6 = {};
		bpf_probe_read_user(&in6, sizeof(in6), uaddr);
		sa->family = AF_INET6;
		sa->port = bpf_ntohs(in6.sin6_port);
		__builtin_memcpy(sa->addr, &in6.sin6_addr, 16);
	} else if (family == AF_UNIX) {
		sa->family = AF_UNIX;
		if (!path->len)
			pos = put_user_str(rec, pos, uaddr + 2, path, flags);
	}
	return pos;
}

/* Fills `local` and (when still empty) `peer` from the socket behind `f`; AF_UNIX: the bound path. */
static __always_inline __u32 put_sock_tuple(__u8 *rec, __u32 pos, struct file *f, struct rae_sockaddr *peer,
					    struct rae_sockaddr *local, struct rae_str *path, __u32 *sock_type)
{
	if (!f)
		return pos;
	umode_t mode = BPF_CORE_READ(f, f_inode, i_mode);
	if ((mode & S_IFMT) != S_IFSOCK)
		return pos;
	struct socket *sock = BPF_CORE_READ(f, private_data);
	*sock_type = (__u16)BPF_CORE_READ(sock, type);
	struct sock *sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return pos;
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
	int fill_peer = peer->family == 0;
	if (family == AF_INET) {
		local->family = AF_INET;
		local->port = BPF_CORE_READ(sk, __sk_common.skc_num);
		__u32 a = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
		__builtin_memcpy(local->addr, &a, 4);
		if (fill_peer) {
			peer->family = AF_INET;
			peer->port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
			a = BPF_CORE_READ(sk, __sk_common.skc_daddr);
			__builtin_memcpy(peer->addr, &a, 4);
		}
	} else if (family == AF_INET6) {
		local->family = AF_INET6;
		local->port = BPF_CORE_READ(sk, __sk_common.skc_num);
		BPF_CORE_READ_INTO(&local->addr, sk, __sk_common.skc_v6_rcv_saddr);
		if (fill_peer) {
			peer->family = AF_INET6;
			peer->port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
			BPF_CORE_READ_INTO(&peer->addr, sk, __sk_common.skc_v6_daddr);
		}
	} else if (family == AF_UNIX) {
		local->family = AF_UNIX;
		if (fill_peer)
			peer->family = AF_UNIX;
		struct unix_address *ua = BPF_CORE_READ((struct unix_sock *)sk, addr);
		if (ua && !path->len && pos <= RAE_MAX_RECORD - RAE_MAX_PATH) {
			int len = BPF_CORE_READ(ua, len) - 2; /* minus sun_family */
			if (len > 0 && len < 108) {
				__u8 *dst = rec + (pos & REC_MASK);
				bpf_probe_read_kernel(dst, len & 127, (void *)ua + bpf_core_field_offset(struct unix_address, name) + 2);
				/* Filesystem names are stored with their NUL; abstract ones (leading NUL) are not. */
				if (rec[(pos + len - 1) & REC_MASK] == 0)
					len--;
				__u32 end = (pos + len) & REC_MASK;
				rec[end] = 0;
				path->off = pos;
				path->len = len;
				pos += len + 1;
			}
		}
	}
	return pos;
}

/* Number of `pid` as seen from the namespace at `level` (0 = initial). */
static __always_inline __u32 pid_nr_at(struct pid *pid, __u32 level)
{
	struct upid up = {};
	if (!pid)
		return 0;
	bpf_probe_read_kernel(&up, sizeof(up),
			      (void *)pid + bpf_core_field_offset(struct pid, numbers) +
				      (level & 31) * bpf_core_type_size(struct upid));
	return up.nr;
}

/* cgroup v2 path of `t` ("/" for the root), walked through kernfs parents. */
static __always_inline __u32 put_cgroup(__u8 *rec, __u32 pos, __u8 *walk, struct task_struct *t, struct rae_str *ref)
{
	struct kernfs_node *kn = BPF_CORE_READ(t, cgroups, dfl_cgrp, kn);
	__u32 wpos = RAE_MAX_PATH - 1;
	if (!kn || !walk || pos > RAE_MAX_RECORD - RAE_MAX_PATH)
		return pos;
	walk[PATH_MASK] = 0;
	for (int i = 0; i < 16; i++) {
		struct kernfs_node *parent;
		if (bpf_core_field_exists(kn->__parent))
			parent = BPF_CORE_READ(kn, __parent);
		else
			parent = BPF_CORE_READ((struct kernfs_node___old *)kn, parent);
		if (!parent)
			break;
		const char *name = BPF_CORE_READ(kn, name);
		char part[128];
		long n = bpf_probe_read_kernel_str(part, sizeof(part), name);
		if (n <= 1 || (__u32)n >= wpos || wpos > RAE_MAX_PATH - 1)
			break;
		wpos -= n - 1;
		bpf_probe_read_kernel(walk + (wpos & PATH_MASK), (n - 1) & 127, part);
		wpos -= 1;
		walk[wpos & PATH_MASK] = '/';
		kn = parent;
	}
	if (wpos == RAE_MAX_PATH - 1) {
		wpos -= 1;
		walk[wpos & PATH_MASK] = '/';
	}
	__u32 n = RAE_MAX_PATH - wpos;
	if (n > RAE_MAX_CGROUP)
		return pos;
	bpf_probe_read_kernel(rec + (pos & REC_MASK), n & (RAE_MAX_CGROUP * 2 - 1), walk + (wpos & PATH_MASK));
	ref->off = pos;
	ref->len = n - 1;
	return pos + n;
}

/* Ids, credentials, tty and namespaces of `t` into the numeric part of a proc record. */
static __always_inline void fill_proc(struct rae_proc *r, struct task_struct *t)
{
	r->ppid = BPF_CORE_READ(t, real_parent, tgid);
	struct pid *tp = BPF_CORE_READ(t, thread_pid);
	__u32 level = BPF_CORE_READ(tp, level);
	r->vtid = pid_nr_at(tp, level);
	struct pid *gp = BPF_CORE_READ(t, group_leader, thread_pid);
	r->vpid = pid_nr_at(gp, level);
	r->sid = pid_nr_at(BPF_CORE_READ(t, signal, pids[PIDTYPE_SID]), 0);
	r->pgid = pid_nr_at(BPF_CORE_READ(t, signal, pids[PIDTYPE_PGID]), 0);
	r->ruid = BPF_CORE_READ(t, cred, uid.val);
	r->rgid = BPF_CORE_READ(t, cred, gid.val);
	r->loginuid = bpf_core_field_exists(t->loginuid) ? BPF_CORE_READ(t, loginuid.val) : 0xffffffff;
	struct tty_struct *tty = BPF_CORE_READ(t, signal, tty);
	if (tty) {
		__u32 major = BPF_CORE_READ(tty, driver, major);
		__u32 minor = BPF_CORE_READ(tty, driver, minor_start) + BPF_CORE_READ(tty, index);
		r->tty = (major << 20) | (minor & 0xfffff);
	}
	r->start_ns = BPF_CORE_READ(t, start_boottime);
	struct upid up = {};
	bpf_probe_read_kernel(&up, sizeof(up),
			      (void *)tp + bpf_core_field_offset(struct pid, numbers) +
				      (level & 31) * bpf_core_type_size(struct upid));
	r->pidns = BPF_CORE_READ(up.ns, ns.inum);
	r->mntns = BPF_CORE_READ(t, nsproxy, mnt_ns, ns.inum);
}

/* Whether the process (euid/egid) may write its executable, by the mode bits (root: always). */
static __always_inline int exe_writable(struct file *exe, __u32 euid, __u32 egid)
{
	if (!exe)
		return 0;
	struct inode *ino = BPF_CORE_READ(exe, f_inode);
	umode_t mode = BPF_CORE_READ(ino, i_mode);
	if (euid == 0)
		return 1;
	if (BPF_CORE_READ(ino, i_uid.val) == euid)
		return (mode & 0200) != 0;
	if (BPF_CORE_READ(ino, i_gid.val) == egid)
		return (mode & 0020) != 0;
	return (mode & 0002) != 0;
}

/*
 * The executable's inode ctime and mtime as epoch ns (proc.exe_ino.ctime/mtime), as the modern
 * probe's execve exit fills its exe_ino_ctime/mtime parameters (extract__ctime_from_inode,
 * extract__mtime_from_inode, extract__epoch_ns_from_time: sec * 10^9 + nsec); 0 without a file.
 */
static __always_inline void exe_times(struct file *exe, struct rae_proc *r)
{
	if (!exe)
		return;
	struct inode *ino = BPF_CORE_READ(exe, f_inode);
	if (!ino)
		return;
	__u64 sec, nsec;
	if (bpf_core_field_exists(ino->i_ctime_sec)) {
		sec = BPF_CORE_READ(ino, i_ctime_sec);
		nsec = BPF_CORE_READ(ino, i_ctime_nsec);
	} else if (bpf_core_field_exists(((struct inode___v6_6 *)ino)->__i_ctime)) {
		sec = BPF_CORE_READ((struct inode___v6_6 *)ino, __i_ctime.tv_sec);
		nsec = BPF_CORE_READ((struct inode___v6_6 *)ino, __i_ctime.tv_nsec);
	} else {
		sec = BPF_CORE_READ((struct inode___old *)ino, i_ctime.tv_sec);
		nsec = BPF_CORE_READ((struct inode___old *)ino, i_ctime.tv_nsec);
	}
	/* since 6.13 (multigrain timestamps) bit 31 of i_ctime_nsec is I_CTIME_QUERIED, not time:
	 * inode_get_ctime_nsec() masks it, and so does this (a nanosecond count never reaches it) */
	r->exe_ino_ctime = sec * 1000000000ULL + (nsec & 0x7fffffffULL);
	if (bpf_core_field_exists(ino->i_mtime_sec)) {
		sec = BPF_CORE_READ(ino, i_mtime_sec);
		nsec = BPF_CORE_READ(ino, i_mtime_nsec);
	} else if (bpf_core_field_exists(((struct inode___v6_7 *)ino)->__i_mtime)) {
		sec = BPF_CORE_READ((struct inode___v6_7 *)ino, __i_mtime.tv_sec);
		nsec = BPF_CORE_READ((struct inode___v6_7 *)ino, __i_mtime.tv_nsec);
	} else {
		sec = BPF_CORE_READ((struct inode___old *)ino, i_mtime.tv_sec);
		nsec = BPF_CORE_READ((struct inode___old *)ino, i_mtime.tv_nsec);
	}
	r->exe_ino_mtime = sec * 1000000000ULL + nsec;
}

/*
 * proc.is_exe_upper_layer / proc.is_exe_lower_layer (execve's EXE_UPPER_LAYER / EXE_LOWER_LAYER):
 * the overlayfs layer of the executable, as libs' extract__overlay_layer decides it. Not a file
 * of an overlayfs: 0. Upper (RAE_PF_EXE_UPPER): its overlay inode has an upper dentry whose inode
 * has a number, a file written or copied up in the writable layer. Else lower (RAE_PF_EXE_LOWER):
 * a file only a lower layer (an image's) holds. Never both. The overlay inode wraps the VFS inode
 * (struct ovl_inode.vfs_inode), as libsinsp's probes read it.
 */
#define RAE_OVERLAYFS_SUPER_MAGIC 0x794c7630
static __always_inline __u32 exe_overlay_layer(struct file *exe)
{
	if (!exe)
		return 0;
	struct inode *ino = BPF_CORE_READ(exe, f_inode);
	if (BPF_CORE_READ(ino, i_sb, s_magic) != RAE_OVERLAYFS_SUPER_MAGIC)
		return 0;
	struct ovl_inode *oi = (void *)ino - bpf_core_field_offset(struct ovl_inode, vfs_inode);
	struct dentry *upper = BPF_CORE_READ(oi, __upperdentry);
	return upper && BPF_CORE_READ(upper, d_inode, i_ino) != 0 ? RAE_PF_EXE_UPPER : RAE_PF_EXE_LOWER;
}

/*
 * A NUL-separated area of the current task's memory ([start, end): argv or the environment) into
 * rec[pos..], at most RAE_MAX_ARGS - 1 bytes and never past `room` bytes from `pos`; sets `trunc`
 * in *flags when cut. The area's final NUL is dropped from the length; a NUL always follows.
 */
static __always_inline __u32 put_user_area(__u8 *rec, __u32 pos, unsigned long start, unsigned long end, __u32 room,
					   struct rae_str *ref, __u32 *flags, __u32 trunc)
{
	if (end <= start || room < 2 || pos > RAE_MAX_RECORD - 1)
		return pos;
	unsigned long n = end - start;
	if (n >= RAE_MAX_ARGS || n >= room) {
		n = room <= RAE_MAX_ARGS - 1 ? room - 1 : RAE_MAX_ARGS - 1;
		*flags |= trunc;
	}
	/* the masks below stay: the verifier cannot follow the compiler's proof that n and pos are in range */
	barrier_var(n);
	barrier_var(pos);
	n &= RAE_MAX_ARGS - 1;
	if (bpf_probe_read_user(rec + (pos & REC_MASK), n, (void *)start))
		return pos;
	__u32 len = n;
	if (len > 0 && rec[(pos + len - 1) & REC_MASK] == 0)
		len--;
	rec[(pos + len) & REC_MASK] = 0;
	ref->off = pos;
	ref->len = len;
	return pos + len + 1;
}

/* argv of the current task (NUL-separated, from mm->arg_start..arg_end) into rec[pos..]. */
static __always_inline __u32 put_args(__u8 *rec, __u32 pos, struct task_struct *t, struct rae_str *ref, __u32 *flags)
{
	if (pos > RAE_MAX_RECORD - RAE_MAX_ARGS - 1)
		return pos;
	return put_user_area(rec, pos, BPF_CORE_READ(t, mm, arg_start), BPF_CORE_READ(t, mm, arg_end), RAE_MAX_ARGS, ref, flags,
			     RAE_PF_ARGS_TRUNC);
}

/*
 * The environment of the current task (mm->env_start..env_end of the new image, as libsinsp's
 * modern probe reads the execve exit's `env` parameter, bounded like it at RAE_MAX_ENV, libscap's
 * SCAP_MAX_ENV_SIZE) into what is left of the record: the last string of an EXEC record, so a
 * long environment is cut (RAE_PF_ENV_TRUNC) rather than the strings before it.
 */
static __always_inline __u32 put_env(__u8 *rec, __u32 pos, struct task_struct *t, struct rae_str *ref, __u32 *flags)
{
	if (pos >= RAE_MAX_RECORD - 8)
		return pos;
	return put_user_area(rec, pos, BPF_CORE_READ(t, mm, env_start), BPF_CORE_READ(t, mm, env_end), RAE_MAX_RECORD - 8 - pos,
			     ref, flags, RAE_PF_ENV_TRUNC);
}

#endif
