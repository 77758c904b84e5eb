// SPDX-License-Identifier: GPL-2.0 OR Apache-2.0
/*
 * The probe's open filter (RAE_INT_PATHS): the maps and tests by which on_sys_exit leaves in the
 * kernel a read-only open no loaded rule can match (host/sources/syscall/open-filter.ts decides
 * which paths and process names the rules can match; the addon fills the maps). Included once,
 * by probe.bpf.c, after events.h, helpers.bpf.h and syscalls.h.
 */
#ifndef RAE_OPEN_FILTER_BPF_H
#define RAE_OPEN_FILTER_BPF_H

/* The paths read-only opens are recorded for where the table marks the syscall RAE_INT_PATHS
 * (filled by the addon from the rules: host/sources/syscall/open-filter.ts); value unused. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RAE_OPEN_PATHS_MAX);
	__type(key, struct rae_open_key);
	__type(value, __u8);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} open_paths SEC(".maps");

/*
 * Per process (tgid): its name as the engine's thread table holds it, proc.name, so that an open
 * the rules read only by process name (open_names: tar, sshd) is dropped only when the engine
 * would judge it with a name outside them. The table (host/sources/syscall/thread-table.ts) is one
 * entry per process whose name it writes from the process's records alone: an EXEC record's comm
 * (the task's comm after the exec: on_exec), a process FORK record's comm (the child's, copied
 * from its parent's current comm: on_fork), and the /proc scan's comm (cut to 15 bytes) of the
 * processes alive at the start, which the addon copies here (rae_capture_set_proc_names) unless
 * the probe has written the process since; a thread's FORK, prctl(PR_SET_NAME) and a thread's own
 * comm change nothing there (the table follows no prctl rename: should it ever, this map
 * must too). This map follows the same writes, so for a process it holds a name for, that name is
 * the table's, whatever the task's comm is now; a
 * process it holds none for, or a tombstone (c[15] set: its leader thread exited, after which the
 * table forgets the process and reads /proc again when it meets its other threads), has every open
 * kept, as has every process once the map had no room (proc_names_lost). Records lost on the way
 * to the engine can leave the table behind this map; those are counted as lost.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RAE_PROC_NAMES_MAX);
	__type(key, __u32);
	__type(value, struct rae_comm);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} proc_names SEC(".maps");

/* The process names whose read-only opens are recorded whatever their path, where the table marks
 * the syscall RAE_INT_PATHS and open_names_on is set (filled by the addon from the rules); value unused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RAE_OPEN_NAMES_MAX);
	__type(key, struct rae_comm);
	__type(value, __u8);
} open_names SEC(".maps");

/* Written by the addon: whether open_names is consulted (a rule reads opens by process name). */
__u32 open_names_on;
/* Set by the probe when proc_names could not take a process: from then on no open is dropped by name. */
__u32 proc_names_lost;

/* 0x80 in each byte of `w` equal to `c`, 0 in the others (exact, unlike the has-zero-byte test). */
static __always_inline __u64 bytes_eq(__u64 w, __u8 c)
{
	__u64 t = w ^ (c * 0x0101010101010101ull);
	return ~(((t & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full) | t | 0x7f7f7f7f7f7f7f7full);
}

/*
 * Whether the `len` bytes at `s` hold none of "//", "/." and "..": an absolute path that the
 * translator's normalization leaves as it is, and whose '.' and '..' components, which a rule's
 * fd.name could see through, there are none of. Eight bytes at a time, stepping seven so that
 * every pair of neighbours lies inside one read; len <= RAE_OPEN_KEY_BYTES - 2.
 */
static __always_inline int plain_path(const __u8 *s, __u32 len)
{
	for (__u32 o = 0; o < RAE_OPEN_KEY_BYTES - 8; o += 7) {
		if (o + 1 >= len)
			break;
		__u64 w = *(const __u64 *)(s + o);
		__u64 slash = bytes_eq(w, '/'), dot = bytes_eq(w, '.');
		/* byte i is '/' and byte i+1 is '/' or '.', or both are '.'; byte i+1 shifted onto i */
		__u64 bad = (slash & ((slash | dot) >> 8)) | (dot & (dot >> 8));
		__u32 v = len - o; /* bytes of the path in w: pairs (i, i+1) with i + 1 < v count */
		if (v < 9)
			bad &= (1ull << (8 * (v - 1))) - 1;
		if (bad)
			return 0;
	}
	return 1;
}

/* Writes process `pid`'s name to proc_names; no room: every open kept by name from then on. */
static __always_inline void set_proc_name(__u32 pid, const struct rae_comm *name)
{
	if (bpf_map_update_elem(&proc_names, &pid, name, BPF_ANY))
		proc_names_lost = 1;
}

/*
 * Whether the engine may judge an open by process `pid` with a proc.name in open_names: its name
 * in proc_names is one of them, or the probe does not know the name the engine's table holds for
 * it (no entry, a tombstone, or proc_names_lost). A name longer than 15 bytes is keyed by its
 * first 15 (rae_capture_set_open_paths), so it keeps a process whose comm is that cut: more than
 * the engine's proc.name (the comm, never longer) matches, never less.
 */
static __always_inline int kept_by_name(__u32 pid)
{
	if (proc_names_lost)
		return 1;
	struct rae_comm *name = bpf_map_lookup_elem(&proc_names, &pid);
	if (!name || name->c[RAE_COMM_BYTES - 1])
		return 1;
	return bpf_map_lookup_elem(&open_names, name) != NULL;
}

/*
 * Whether a successful open, openat or openat2 (`r`, its path already copied) by process `pid` is
 * one no loaded rule can match: opened read-only, of an absolute plain path (plain_path) that is
 * not in open_paths, by a process whose name is not in open_names (kept_by_name) when that is
 * consulted. The trie's key is the 4 bytes before the path (the end of r->local, still zero for
 * an open) and the path itself, so nothing is copied for the lookup; they are zeroed again after.
 */
static __always_inline int unwanted_open(__u8 *rec, struct rae_syscall *r, __u32 nr, __u64 *a, __u32 pid)
{
	__u32 flags = nr == NR_open ? a[1] : nr == NR_openat ? a[2] : r->aux[0];
	if (flags & 3 /* O_ACCMODE: not O_RDONLY */)
		return 0;
	__u32 len = r->path.len;
	if (r->path.off != sizeof(*r) || len == 0 || len > RAE_OPEN_KEY_BYTES - 2 || (r->sflags & (RAE_SF_PATH_TRUNC | RAE_SF_PATH_FAULT)))
		return 0;
	__u8 *s = rec + sizeof(*r);
	if (s[0] != '/')
		return 0;
	__u32 *key = (__u32 *)(s - 4);
	*key = (len + 1) * 8;
	void *wanted = bpf_map_lookup_elem(&open_paths, key);
	*key = 0;
	if (wanted || !plain_path(s, len))
		return 0;
	return !open_names_on || !kept_by_name(pid);
}

#endif
