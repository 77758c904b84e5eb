/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Wire format of the kernel event records: the single source of truth.
 *
 * Consumed by probe.bpf.c (which writes records into the ring buffer), by the addon (which copies
 * whole records into a caller's buffer, later the evaluator's WebAssembly linear memory) and
 * mirrored, field for field, by host/abi/records.ts and assembly/abi.ts. A layout test
 * compares the mirrors with the offsets the C compiler computes (addon `layout()`); bump
 * RAE_ABI_VERSION on any change.
 *
 * Every record is self-contained and relocatable:
 *   - a 48-byte common header (struct rae_hdr) whose `len` is the whole record size, a multiple of 8,
 *     so a reader walks a batch with `off += hdr.len`;
 *   - a fixed-size body of numeric fields per record kind (rae_syscall, rae_proc, rae_exit, rae_caps);
 *   - a string area after the body. Strings are referenced by struct rae_str {off, len}: `off` is
 *     relative to the start of the record, `len` excludes the terminating NUL that always follows,
 *     and {0, 0} means absent. Multi-part strings (argv, env) are NUL-separated inside one reference.
 * All integers are little-endian (the host's order; x86-64 and arm64). Times are CLOCK_BOOTTIME ns.
 */
#ifndef RAE_EVENTS_H
#define RAE_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
/* The evaluator's side of the layout (records in WebAssembly linear memory). */
#include "eval_abi.h"

#endif

#define RAE_ABI_VERSION 8

/* Values of the probe's per-syscall table `interesting` (set by the addon). */
#define RAE_INT_RECORD 0x1 /* record the syscall's exits */
#define RAE_INT_DATA 0x2   /* ... with its I/O buffer (rae_syscall.data) */
#define RAE_INT_PATHS 0x4  /* open/openat/openat2: a read-only open is recorded only when its path is in open_paths
			    * (or, with open_names_on, its process's name in open_names or unknown to proc_names) */

/* The key of the probe's open_paths trie: a path's bytes and how many bits of them an entry
 * matches (a prefix: its bytes; an exact name: its bytes and the NUL after them). */
#define RAE_OPEN_KEY_BYTES 256
#define RAE_OPEN_PATHS_MAX 4096 /* entries of open_paths */
struct rae_open_key {
	__u32 prefixlen;
	__u8 data[RAE_OPEN_KEY_BYTES];
};

/* A process name as the probe keys it (proc_names' values, open_names' keys): task->comm's bytes
 * up to its NUL, at most 15, zero to the end. */
#define RAE_COMM_BYTES 16
struct rae_comm {
	char c[RAE_COMM_BYTES];
};
#define RAE_OPEN_NAMES_MAX 256   /* entries of open_names */
#define RAE_PROC_NAMES_MAX 65536 /* entries of proc_names: processes alive at once */

/* Record kinds (rae_hdr.kind). */
#define RAE_KIND_SYSCALL 1 /* a syscall that returned: struct rae_syscall */
#define RAE_KIND_EXEC 2    /* sched_process_exec: struct rae_proc, the new image */
#define RAE_KIND_FORK 3    /* sched_process_fork: struct rae_proc for the child (ids + comm only) */
#define RAE_KIND_EXIT 4    /* sched_process_exit: struct rae_exit, one per exiting thread */
#define RAE_KIND_PROC 5    /* /proc bootstrap of a process that existed before capture (host-made) */
#define RAE_KIND_CAPS 6    /* a capset(2) or set*id(2) that succeeded: struct rae_caps, the caller's new credentials */

/* Size limits. A record never exceeds RAE_MAX_RECORD bytes. */
#define RAE_MAX_RECORD 16384 /* the probe emits at most RAE_MAX_RECORD - 8 */
#define RAE_MAX_PATH 4096  /* a path or name argument, NUL included */
#define RAE_MAX_ARGS 4096  /* argv bytes of an exec */
#define RAE_MAX_ENV 4096   /* environment bytes of an exec, NUL included (libscap SCAP_MAX_ENV_SIZE) */
#define RAE_MAX_CGROUP 1024
/* Most bytes of a syscall's I/O buffer (rae_syscall.data): the largest snaplen (Falco's default is 80). */
#define RAE_MAX_DATA 4096

/* rae_syscall.sflags */
#define RAE_SF_COMPAT 0x1         /* ia32 syscall (not decoded; nr is the compat number) */
#define RAE_SF_PATH_TRUNC 0x2     /* a path string was cut at RAE_MAX_PATH or unreadable */
#define RAE_SF_PATH_FAULT 0x4     /* a user pointer could not be read at exit */

/* rae_proc.pflags */
#define RAE_PF_ARGS_TRUNC 0x1     /* argv longer than RAE_MAX_ARGS */
#define RAE_PF_PATH_TRUNC 0x2     /* cwd or exepath deeper than the walk bound */
#define RAE_PF_THREAD 0x4         /* FORK of a thread (tid != pid) */
#define RAE_PF_EXE_WRITABLE 0x8   /* the executable file is writable by the process's euid */
#define RAE_PF_EXE_UPPER 0x10     /* the executable file is in an overlayfs upper layer (EXEC) */
#define RAE_PF_ENV_TRUNC 0x20     /* the environment was longer than RAE_MAX_ENV - 1 or the room left in the record */
#define RAE_PF_EXE_LOWER 0x40     /* the executable file is in an overlayfs lower layer only (EXEC; never with EXE_UPPER) */

/* rae_exit.xflags */
#define RAE_XF_GROUP_DEAD 0x1     /* the last thread of the process exited */

/* A string in the record's string area. */
struct rae_str {
	__u16 off; /* from the start of the record */
	__u16 len; /* bytes, NUL excluded */
};

/* A socket address. family 0 = absent. AF_UNIX paths go to the record's path string. */
struct rae_sockaddr {
	__u16 family; /* AF_INET 2, AF_INET6 10, AF_UNIX 1 */
	__u16 port;   /* host byte order */
	__u32 _pad;
	__u8 addr[16]; /* IPv4 in addr[0..4], IPv6 in all 16, network byte order */
};

/* Common header of every record: 48 bytes. */
struct rae_hdr {
	__u64 ts_ns;     /*  0 CLOCK_BOOTTIME ns */
	__u32 len;       /*  8 whole record, multiple of 8 */
	__u16 kind;      /* 12 RAE_KIND_* */
	__u16 nr;        /* 14 syscall number (SYSCALL), else 0 */
	__u32 pid;       /* 16 thread group id (initial pid namespace) */
	__u32 tid;       /* 20 thread id */
	__u32 uid;       /* 24 effective uid */
	__u32 gid;       /* 28 effective gid */
	__u64 cgroup_id; /* 32 cgroup v2 id of the task */
	__s64 ret;       /* 40 syscall return value; EXIT: exit code; else 0 */
};

/* RAE_KIND_SYSCALL: 192 bytes + strings. */
struct rae_syscall {
	struct rae_hdr hdr;        /*   0 */
	__u64 args[6];             /*  48 argument registers, raw (pointers as addresses) */
	__u64 aux[2];              /*  96 values read through pointers: openat2 {flags, mode} */
	union {
		__u64 resolve;         /* 112 openat2: how.resolve */
		struct rae_str data;   /* 112 the syscalls with an I/O buffer (read/write family, recvfrom/sendto...):
		                        *     its first snaplen bytes when the addon marks the syscall RAE_INT_DATA, else {0, 0} */
	};
	__u32 sflags;              /* 120 RAE_SF_* */
	__u32 sock_type;           /* 124 socket type (SOCK_STREAM 1, SOCK_DGRAM 2, SOCK_RAW 3...) of the fd whose tuple was read; 0 = none */
	struct rae_str path;       /* 128 first path/name argument as passed; AF_UNIX socket path */
	struct rae_str path2;      /* 132 second path (new name of rename/link/symlink) */
	struct rae_str dir;        /* 136 absolute directory a relative `path` resolves against */
	struct rae_str dir2;       /* 140 same for `path2` */
	struct rae_sockaddr peer;  /* 144 remote end (connect/accept/send/recv) */
	struct rae_sockaddr local; /* 168 local end */
};

/* RAE_KIND_EXEC / RAE_KIND_FORK / RAE_KIND_PROC: 176 bytes + strings. */
struct rae_proc {
	struct rae_hdr hdr;     /*   0 */
	__u32 ppid;             /*  48 parent's thread group id */
	__u32 vpid;             /*  52 pid in the task's own pid namespace */
	__u32 vtid;             /*  56 */
	__u32 sid;              /*  60 session id */
	__u32 pgid;             /*  64 process group id */
	__u32 ruid;             /*  68 real uid */
	__u32 rgid;             /*  72 real gid */
	__u32 loginuid;         /*  76 audit login uid, 4294967295 = unset */
	__u32 tty;              /*  80 controlling tty as (major << 20) | minor, 0 = none */
	__u32 pflags;           /*  84 RAE_PF_* */
	__u64 start_ns;         /*  88 task start, CLOCK_BOOTTIME ns */
	__u32 pidns;            /*  96 pid namespace inode number */
	__u32 mntns;            /* 100 mount namespace inode number */
	struct rae_str comm;    /* 104 */
	struct rae_str exe;     /* 108 path as passed to execve (PROC: argv[0]) */
	struct rae_str exepath; /* 112 absolute path of the executable file */
	struct rae_str args;    /* 116 argv, NUL-separated, argv[0] included */
	struct rae_str cwd;     /* 120 */
	struct rae_str cgroup;  /* 124 cgroup v2 path, e.g. /system.slice/x.service */
	__u64 cap_inheritable;  /* 128 cred->cap_inheritable, bit N = capability N (PROC: CapInh) */
	__u64 cap_permitted;    /* 136 cred->cap_permitted (PROC: CapPrm) */
	__u64 cap_effective;    /* 144 cred->cap_effective (PROC: CapEff) */
	struct rae_str env;     /* 152 the environment, NUL-separated (EXEC: the new image's mm env area; PROC: /proc/PID/environ) */
	__u32 _pad;             /* 156 */
	/*
	 * The executable file's inode times, epoch ns (libsinsp's exe_ino_ctime/mtime: the modern
	 * probe's execve exit parameters 25 and 26; PROC: stat of /proc/PID/exe). 0 = unknown
	 * (FORK, or no executable file).
	 */
	__u64 exe_ino_ctime;    /* 160 inode->i_ctime, the last status change */
	__u64 exe_ino_mtime;    /* 168 inode->i_mtime, the last modification */
};

/* RAE_KIND_EXIT: 56 bytes. */
struct rae_exit {
	struct rae_hdr hdr; /*  0 hdr.ret = exit code as wait(2) reports it */
	__u32 xflags;       /* 48 RAE_XF_* */
	__u32 _pad;         /* 52 */
};

/*
 * RAE_KIND_CAPS: 72 bytes. The caller's credentials after capset(2) or a set*id(2) call (setuid,
 * setgid, setreuid, setregid, setresuid, setresgid, setfsuid, setfsgid): hdr.uid/gid are the new
 * effective ids, the body the new sets.
 */
struct rae_caps {
	struct rae_hdr hdr;    /*  0 hdr.nr = the syscall's number, hdr.ret = 0 */
	__u64 cap_inheritable; /* 48 */
	__u64 cap_permitted;   /* 56 */
	__u64 cap_effective;   /* 64 */
};

/* Kernel-side counters, summed over CPUs by the addon. */
struct rae_stats {
	__u64 emitted; /* records written to the ring */
	__u64 lost;    /* records dropped because the ring was full */
	__u64 seen;    /* interesting syscalls that reached the probe */
	__u64 truncated; /* records with a string cut short (RAE_SF_PATH_TRUNC, RAE_PF_*_TRUNC) */
};

/* The evaluator's side of the layout (records in WebAssembly linear memory). */
#include "eval_abi.h"

#endif
