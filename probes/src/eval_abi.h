/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Evaluator side of the wire format: how events, process state and matches are laid out in the
 * linear memory of a compiled rule module. Included from events.h (the single source of truth),
 * mirrored by assembly/abi.ts and host/abi/module.ts; test/runtime/abi-layout.test.ts fails on
 * any drift. Shares RAE_ABI_VERSION with the kernel records.
 *
 * Linear memory of a module (fixed size, fixed addresses, so the state region can be copied from
 * one module to the next at a hot swap without relocation):
 *
 *   [0, RAE_EVAL_STATIC_END)           module statics (constant tables); a module whose statics
 *                                       reach past this is refused
 *   [RAE_EVAL_STATE_BASE, +SIZE)       persistent state: thread table, fd table, user and group
 *                                       names, string heap; written once per process, carried
 *                                       over on swap
 *   [RAE_EVAL_BATCH_BASE, +SIZE)       one batch: eval records, per-batch thread entries, string
 *                                       and list area (host-written, or copied kernel records)
 *   [RAE_EVAL_OUT_BASE, +SIZE)         match buffer: struct rae_match per (event, rule)
 *   [RAE_EVAL_SCRATCH_BASE, +SIZE)     per-event scratch for transformers (tolower(), b64()...)
 *
 * Strings are {u32 addr, u32 len} with `addr` an absolute address in linear memory (a string may
 * live in the batch area, a thread entry's heap or a copied kernel record). Lists are
 * {u32 addr, u32 count} pointing at `count` 8-byte elements (strings or numbers).
 * All integers little-endian.
 */
#ifndef RAE_EVAL_ABI_H
#define RAE_EVAL_ABI_H

/* Memory map (bytes). The module's memory is exactly RAE_EVAL_PAGES pages, minimum = maximum. */
#define RAE_EVAL_PAGES 512
#define RAE_EVAL_MEMORY_BYTES 0x2000000
#define RAE_EVAL_STATIC_END 0x100000
#define RAE_EVAL_STATE_BASE 0x100000
#define RAE_EVAL_STATE_SIZE 0x800000
#define RAE_EVAL_BATCH_BASE 0x900000
#define RAE_EVAL_BATCH_SIZE 0x1400000
#define RAE_EVAL_OUT_BASE 0x1D00000
#define RAE_EVAL_OUT_SIZE 0x100000
#define RAE_EVAL_SCRATCH_BASE 0x1E00000
#define RAE_EVAL_SCRATCH_SIZE 0x100000

/*
 * Strings have no length limit of their own: the host writes whole values (a string may be as
 * long as the batch area), and rules compare whole values, as Falco does. Kernel strings are
 * bounded by the probe (RAE_MAX_PATH, RAE_MAX_ARGS).
 */
/* Deepest ancestor walk (proc.aname and friends); also bounds cycles in parent links. */
#define RAE_EVAL_MAX_DEPTH 16

/* Event sources: the first argument of evaluate(). */
#define RAE_SRC_SYSCALL 0
#define RAE_SRC_K8S_AUDIT 1

/*
 * An eval record: a fixed header, the module's presence words, then the module's slots (8 bytes
 * each: a string or list reference, an i64/u64, an f64, or 0/1 for booleans). Which field sits
 * in which slot is the module's own table (CompiledRuleset.layout); slot i is present when bit
 * (i % 64) of presence word (i / 64) is set. Stride = 8 + 8 * words + 8 * slots.
 */
struct rae_eval_rec {
	__u32 type;   /* 0 evt.type id (host/abi/module.ts evtTypeId), 0 = none */
	__u32 thread; /* 4 address of the thread entry (struct rae_thread), 0 = none */
	/* 8: __u64 present[words]; then __u64 slots[n] */
};
#define RAE_REC_TYPE 0
#define RAE_REC_THREAD 4
#define RAE_REC_PRESENT 8

/* A string or list reference inside a record, a thread entry or a list. */
struct rae_ref {
	__u32 addr;
	__u32 len; /* bytes for strings, elements for lists */
};

/*
 * A thread entry: one per process (written once, by the kernel-record ingest or by the host),
 * linked to its parent's entry, so proc.pname and proc.aname[N] are parent walks. 208 bytes.
 */
struct rae_thread {
	__u32 tid;      /*   0 */
	__u32 pid;      /*   4 proc.pid */
	__u32 parent;   /*   8 address of the parent's entry, 0 = none */
	__u32 present;  /*  12 RAE_TP_* bits */
	__s64 vpid;     /*  16 proc.vpid */
	__s64 loginuid; /*  24 user.loginuid */
	__u32 tty;      /*  32 proc.tty */
	__u32 uid;      /*  36 user.uid */
	__u32 gid;      /*  40 group.gid */
	__u32 flags;    /*  44 RAE_TF_* booleans (present bits say which are known) */
	struct rae_ref name;       /*  48 proc.name */
	struct rae_ref exe;        /*  56 proc.exe */
	struct rae_ref exepath;    /*  64 proc.exepath */
	struct rae_ref cmdline;    /*  72 proc.cmdline */
	struct rae_ref args;       /*  80 proc.args */
	struct rae_ref cwd;        /*  88 proc.cwd */
	struct rae_ref env;        /*  96 proc.env */
	struct rae_ref user;       /* 104 user.name */
	struct rae_ref group;      /* 112 group.name */
	struct rae_ref container;  /* 120 container.id */
	__u64 exe_ino_ctime;       /* 128 proc.exe_ino.ctime, epoch ns */
	__u32 ctr;                 /* 136 address of the process's container entry (struct rae_ctr), 0 = none */
	__u32 ctr_pad;             /* 140 */
	__u64 exe_ino_mtime;       /* 144 proc.exe_ino.mtime, epoch ns */
	__u64 exe_ino_ctime_proc;  /* 152 proc.exe_ino.ctime_duration_proc_start: start (epoch ns) - exe_ino_ctime, mod 2^64 */
	__u32 sid;                 /* 160 proc.sid */
	__u32 vpgid;               /* 164 proc.vpgid */
	struct rae_ref sname;      /* 168 proc.sname (the session leader's name) */
	struct rae_ref loginname;  /* 176 user.loginname (the name of user.loginuid) */
	struct rae_ref cap_inh;    /* 184 thread.cap_inheritable (libsinsp caps_to_string text) */
	struct rae_ref cap_prm;    /* 192 thread.cap_permitted */
	struct rae_ref cap_eff;    /* 200 thread.cap_effective */
};
#define RAE_THREAD_SIZE 208

/* rae_thread.present bits, one per field (RAE_TP_EXE_UPPER: both overlay layer flags, which one check decides). */
#define RAE_TP_PID 0x1
#define RAE_TP_VPID 0x2
#define RAE_TP_LOGINUID 0x4
#define RAE_TP_TTY 0x8
#define RAE_TP_UID 0x10
#define RAE_TP_GID 0x20
#define RAE_TP_NAME 0x40
#define RAE_TP_EXE 0x80
#define RAE_TP_EXEPATH 0x100
#define RAE_TP_CMDLINE 0x200
#define RAE_TP_ARGS 0x400
#define RAE_TP_CWD 0x800
#define RAE_TP_ENV 0x1000
#define RAE_TP_USER 0x2000
#define RAE_TP_GROUP 0x4000
#define RAE_TP_CONTAINER 0x8000
#define RAE_TP_EXE_CTIME 0x10000 /* proc.exe_ino.ctime (each of the three: libsinsp reads 0 as missing) */
#define RAE_TP_IMAGE 0x20000
#define RAE_TP_EXE_MTIME 0x40000 /* proc.exe_ino.mtime */
#define RAE_TP_EXE_CTIME_PROC 0x80000 /* proc.exe_ino.ctime_duration_proc_start */
#define RAE_TP_EXE_WRITABLE 0x100000
#define RAE_TP_EXE_UPPER 0x200000 /* proc.is_exe_upper_layer and proc.is_exe_lower_layer */
#define RAE_TP_EXE_MEMFD 0x400000
#define RAE_TP_PRIVILEGED 0x800000
#define RAE_TP_SID 0x1000000
#define RAE_TP_VPGID 0x2000000
#define RAE_TP_SNAME 0x4000000
#define RAE_TP_LOGINNAME 0x8000000
#define RAE_TP_CAP_INH 0x10000000
#define RAE_TP_CAP_PRM 0x20000000
#define RAE_TP_CAP_EFF 0x40000000

/* rae_thread.flags: the value of each boolean field. */
#define RAE_TF_EXE_WRITABLE 0x1
#define RAE_TF_EXE_UPPER 0x2
#define RAE_TF_EXE_MEMFD 0x4
#define RAE_TF_PRIVILEGED 0x8
#define RAE_TF_EXE_LOWER 0x10

/*
 * The persistent state region at RAE_EVAL_STATE_BASE: a header, the thread entries (an array;
 * the writer keeps the tid -> entry index and reuses freed entries), an fd table keyed by
 * (pid, fd), uid and gid name tables, then a string heap (up to the DNS table). A hot swap copies the header, the
 * entries up to `threads` and the heap up to `heap_top` to the same addresses in the new module.
 */
struct rae_state_hdr {
	__u32 abi;       /*  0 RAE_ABI_VERSION of the writer */
	__u32 threads;   /*  4 thread entries in use (high-water mark) */
	__u32 heap_top;  /*  8 next free byte of the string heap (absolute address) */
	__u32 fds;       /* 12 fd entries in use (reserved; 0 while the fd table is unused) */
};
#define RAE_STATE_HDR_SIZE 64
#define RAE_STATE_THREADS (RAE_EVAL_STATE_BASE + RAE_STATE_HDR_SIZE)
#define RAE_STATE_THREAD_SLOTS 16384
#define RAE_STATE_FDS (RAE_STATE_THREADS + RAE_STATE_THREAD_SLOTS * RAE_THREAD_SIZE)
#define RAE_STATE_FD_SLOTS 32768
#define RAE_STATE_USERS (RAE_STATE_FDS + RAE_STATE_FD_SLOTS * RAE_FD_SIZE)
#define RAE_STATE_NAME_SLOTS 1024
#define RAE_STATE_GROUPS (RAE_STATE_USERS + RAE_STATE_NAME_SLOTS * RAE_NAME_SIZE)
#define RAE_STATE_HEAP (RAE_STATE_GROUPS + RAE_STATE_NAME_SLOTS * RAE_NAME_SIZE)

/*
 * The container table at the end of the state region (after the string heap): fixed entries,
 * one per container the host has seen, written by the host when the metadata cache learns or
 * forgets a container (host/sources/container/table.ts). A thread entry's `ctr` points at its
 * container's entry. An entry: `present` at 12 (RAE_CP_* bits, as rae_thread's), `flags` at 16,
 * start_ts at 24, RAE_CTR_REFS string refs from 32, RAE_CTR_KEYS refs of keyed fields
 * (container.label[k], container.mount.dest[k] ...) in the order of the module's key list
 * (all ones = absent), then the strings themselves, inside the entry.
 */
#define RAE_CTR_SIZE 4096
#define RAE_CTR_SLOTS 256
#define RAE_CTR_REFS 24
#define RAE_CTR_KEYS 32
#define RAE_CTR_PRESENT 12
#define RAE_CTR_START_TS 24
#define RAE_CP_START_TS (1u << 30) /* container.start_ts present (an epoch time, ns) */
#define RAE_STATE_CONTAINERS (RAE_EVAL_STATE_BASE + RAE_EVAL_STATE_SIZE - RAE_CTR_SLOTS * RAE_CTR_SIZE)

/*
 * The DNS name table, just before the container table (the string heap ends at it): the
 * addresses the host resolved for the domain names the module's rules compare fd.sip.name,
 * fd.cip.name, fd.lip.name and fd.rip.name with (host/sources/dns/), rewritten by the host when
 * an answer changes or another module is bound. The translators give an endpoint's name as
 * libsinsp's sinsp_dns_manager::name_of does: the name whose resolved addresses hold it.
 * A u32 entry count at RAE_DNS_COUNT, then RAE_DNS_SLOTS entries of RAE_DNS_ENTRY_SIZE bytes
 * sorted by (address length, address bytes) for a binary search: the address in 16 bytes (an
 * IPv4 one in the first 4, zeros after), its length (4 or 16) at 16, the name's string ref at
 * 24; the names' bytes after the entries, inside the table.
 */
#define RAE_DNS_SIZE 0x40000
#define RAE_DNS_SLOTS 4096
#define RAE_DNS_ENTRY_SIZE 32
#define RAE_DNS_COUNT 0
#define RAE_DNS_ENTRIES 64
#define RAE_DNS_ALEN 16
#define RAE_DNS_NAME 24
#define RAE_STATE_DNS (RAE_STATE_CONTAINERS - RAE_DNS_SIZE)

/* An fd table entry: 16 bytes; pid 0 = free. */
struct rae_fd {
	__u32 pid;
	__s32 fd;
	struct rae_ref name;
};
#define RAE_FD_SIZE 16

/* A uid or gid name entry: 12 bytes; name.len 0 = free. */
struct rae_name {
	__u32 id;
	struct rae_ref name;
};
#define RAE_NAME_SIZE 12

/*
 * One match in the match buffer: event index within the batch and the rule's id. Rule
 * RAE_MATCH_REFERENCE is no rule: the module could not judge the event whole (a transformer's
 * result did not fit the scratch area), wrote no other match for it, and hands it back to the
 * host, which judges it with the reference interpreter.
 */
struct rae_match {
	__u32 event;
	__u32 rule;
};
#define RAE_MATCH_SIZE 8
#define RAE_MATCH_REFERENCE 0xFFFFFFFF

#endif
