/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Native kernel-record translator: SYSCALL wire records (../src/events.h) into the eval records
 * of a rule module's batch region (../src/eval_abi.h), the per-event half of
 * host/sources/syscall/ingest.ts done in C. Process records (EXEC/FORK/EXIT/PROC) are left to
 * the host's thread table: the translator stops at each one and says where.
 *
 * The host describes the running module in a plan (int32 words, RAE_IP_* below): the record
 * stride, the bytes of header and presence words to zero, the slots the module reads (field id,
 * slot offset, slot index), per syscall number its evt.type id and class bits, and the
 * constant strings (errno names and fd types) as (offset, length) pairs in a blob that the
 * translator copies to the start of the batch's string area. Field ids (RAE_FLD_*) are mirrored
 * by ingest.ts, which checks them against the addon's `ingestAbi` at load.
 */
#ifndef RAE_INGEST_H
#define RAE_INGEST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Field ids of the slots the translator can fill. */
enum {
	RAE_FLD_NUM = 1, RAE_FLD_RAWRES, RAE_FLD_RES, RAE_FLD_FAILED, RAE_FLD_FDNUM, RAE_FLD_NAME,
	RAE_FLD_NAMERAW, RAE_FLD_DIR, RAE_FLD_FILE, RAE_FLD_TYPECHAR, RAE_FLD_TYPE, RAE_FLD_READ,
	RAE_FLD_WRITE, RAE_FLD_CREATE, RAE_FLD_SIP, RAE_FLD_CIP, RAE_FLD_LIP, RAE_FLD_RIP, RAE_FLD_SPORT,
	RAE_FLD_CPORT, RAE_FLD_LPORT, RAE_FLD_RPORT, RAE_FLD_IPS, RAE_FLD_PORTS, RAE_FLD_FAMILY,
	RAE_FLD_ARG_FLAGS, RAE_FLD_ARG_TARGET, RAE_FLD_ARG_OLDPATH, RAE_FLD_ARG_DOMAIN, RAE_FLD_ARG_REQUEST,
	RAE_FLD_L4PROTO, RAE_FLD_CONNECTED, RAE_FLD_NAME_CHANGED, RAE_FLD_DURATION,
	RAE_FLD_ARG_NAME, RAE_FLD_ARG_PATH, RAE_FLD_ARG_FILENAME, RAE_FLD_ARG_NEWPATH, RAE_FLD_ARG_MODE,
	RAE_FLD_ARG_FD, RAE_FLD_ARG_UID, RAE_FLD_ARG_CMD,
	/* per-event header values and constants: thread.tid, evt.time (decimal text of evt.rawtime),
	 * evt.rawtime (boot ns + RAE_IS_EPOCH_*), evt.dir, evt.source, evt.hostname, and
	 * evt.is_open_exec (an open creating a file with an execute bit in its mode) */
	RAE_FLD_TID, RAE_FLD_TIME, RAE_FLD_RAWTIME, RAE_FLD_DIRECTION, RAE_FLD_SOURCE, RAE_FLD_HOSTNAME,
	RAE_FLD_OPEN_EXEC,
	/* evt.arg.pid (ptrace), dirfd, res, linkpath (symlink/symlinkat), see render.ts */
	RAE_FLD_ARG_PID, RAE_FLD_ARG_DIRFD, RAE_FLD_ARG_RES, RAE_FLD_ARG_LINKPATH,
	/* container.duration: evt.rawtime minus the container entry's start_ts */
	RAE_FLD_CTR_DURATION,
	/* proc.env[NAME]: a variable of the thread entry's environment (host/sources/syscall/env-index.ts) */
	RAE_FLD_PROC_ENV,
	/* evt.buffer (the record's I/O buffer, its bytes) and evt.arg.data (its printable rendering) */
	RAE_FLD_BUFFER = 57, RAE_FLD_ARG_DATA = 58,
	/* fd.sip.name, fd.cip.name, fd.lip.name, fd.rip.name: the name the DNS table (RAE_STATE_DNS)
	 * gives the end's address (host/sources/dns/table.ts) */
	RAE_FLD_SIP_NAME = 59, RAE_FLD_CIP_NAME, RAE_FLD_LIP_NAME, RAE_FLD_RIP_NAME,
	RAE_FLD_COUNT
};

/* Per-syscall class bits (plan word RAE_IP_NR + 2 * nr + 1). */
#define RAE_NRC_OPEN 0x1      /* opens a file: fd.type file, evt.is_open_* */
#define RAE_NRC_FD_RET 0x2    /* fd.num = the return value */
#define RAE_NRC_FD_ARG0 0x4   /* fd.num = the first argument */
#define RAE_NRC_SERVER 0x8    /* the local end is the server (accept) */
#define RAE_NRC_SOCKET 0x100  /* socket(2): evt.arg.domain */
#define RAE_NRC_PTRACE 0x200  /* ptrace(2): evt.arg.request */
#define RAE_NRC_CONNECT 0x400 /* connect(2): fd.connected unless it failed (EINPROGRESS counts) */
#define RAE_NRC_SENDTO 0x800  /* sendto/sendmsg: fd.name_changed when an address was given */
#define RAE_NRC_FLAGS_SHIFT 4 /* facts.flags: 0 none, open flags of 1 creat, 2 openat2 aux[0], 3 args[1], 4 args[2], */
#define RAE_NRC_FLAGS_AT2 5   /* ... AT_* flags (evt.arg.flags) of args[2] (unlinkat), */
#define RAE_NRC_FLAGS_AT4 6   /* ... of args[4] (linkat), */
#define RAE_NRC_FLAGS_DOMAIN 7 /* ... socket(2)'s domain args[0] (fd.type of the new socket), */
#define RAE_NRC_FLAGS_EXEC 8  /* ... none: execve/execveat, evt.arg.flags from the thread entry's RAE_TF_EXE_* */
/* evt.arg.* of the syscall's parameters (libsinsp's names, see host/sources/syscall/render.ts) */
#define RAE_NRC_PATHARG_SHIFT 12 /* 3 bits: the first path is evt.arg. 1 name, 2 path, 3 filename, 4 oldpath */
#define RAE_NRC_PATH_RAW 0x8000  /* ... as passed (PT_CHARBUF), never joined with its directory */
#define RAE_NRC_NEWPATH 0x10000  /* the second path is evt.arg.newpath */
#define RAE_NRC_MODE_SHIFT 17    /* 3 bits: evt.arg.mode from args[n - 1] (1..6), 7 = aux[1]; 0 none */
#define RAE_NRC_MODEFMT_SHIFT 20 /* 2 bits: 1 chmod names, 2 open octal (%#o), 3 hex (%X) */
#define RAE_NRC_FDARG_SHIFT 22   /* 2 bits: evt.arg.fd 1 = the return value, 2 = args[0] */
#define RAE_NRC_SETUID 0x1000000 /* setuid(2): evt.arg.uid (user names live in the host: stop there) */
#define RAE_NRC_BPF 0x2000000    /* bpf(2): evt.arg.cmd */
#define RAE_NRC_DIRFD 0x4000000  /* evt.arg.dirfd = args[0] (PT_FD) */
#define RAE_NRC_LINKPATH 0x8000000 /* symlink/symlinkat: the second path is evt.arg.linkpath */
#define RAE_NRC_RES 0x10000000   /* evt.arg.res = the return value (PT_ERRNO); not when it is evt.arg.fd */
/* bind (when it succeeded) and listen on an IP socket with a local port: libsinsp's server socket
 * (host/sources/syscall/fields.ts serverSocket): fd.sip/fd.sport the local end, no other end, fd.name addr:port */
#define RAE_NRC_BIND 0x20000000
#define RAE_NRC_LISTEN 0x40000000
/* a syscall with an I/O buffer (rae_syscall.data: evt.buffer, evt.arg.data; render.ts DATA_ARG) */
#define RAE_NRC_DATA 0x80000000u

/*
 * Constant string ids: 0..255 evt.res by errno (0 = SUCCESS; length 0 = no name), fd types,
 * socket domains 0..63 and ptrace requests 0..31 and 0x4200..0x420f (length 0 = print the
 * number), the open access modes (O_RDONLY, O_WRONLY, O_RDWR) and the open flag names whose
 * bits are the plan's RAE_IP_OFLAGS words, then fd.l4proto's tcp, udp, raw, then the chmod mode
 * names of bits 0..11 (S_IXOTH ... S_ISUID), then evt.dir '<', evt.source 'syscall' and the
 * host name (evt.hostname).
 */
enum {
	RAE_K_ERRNO_END = 256, RAE_K_F = 256, RAE_K_FILE, RAE_K_D, RAE_K_DIRECTORY, RAE_K_4, RAE_K_IPV4,
	RAE_K_6, RAE_K_IPV6, RAE_K_U, RAE_K_UNIX, RAE_K_IP,
	RAE_K_DOMAIN, RAE_K_PTRACE = RAE_K_DOMAIN + 64, RAE_K_PTRACE_HI = RAE_K_PTRACE + 32,
	RAE_K_OACC = RAE_K_PTRACE_HI + 16, RAE_K_OFLAG = RAE_K_OACC + 3, RAE_K_L4 = RAE_K_OFLAG + 17, RAE_K_MODE = RAE_K_L4 + 3,
	RAE_K_DIRECTION = RAE_K_MODE + 12, RAE_K_SOURCE, RAE_K_HOSTNAME,
	RAE_K_COUNT
};
#define RAE_OFLAG_COUNT 17

/* Plan layout (int32 words). */
#define RAE_IP_STRIDE 0
#define RAE_IP_HEAD 1                       /* bytes of header + presence words zeroed */
#define RAE_IP_NSLOTS 2
#define RAE_IP_NR 4                         /* 512 pairs: evt.type id, class bits */
#define RAE_IP_CONST (RAE_IP_NR + 2 * 512)  /* RAE_K_COUNT pairs: blob offset, length */
#define RAE_IP_OFLAGS (RAE_IP_CONST + 2 * RAE_K_COUNT) /* RAE_OFLAG_COUNT open flag bits */
#define RAE_IP_SLOTS (RAE_IP_OFLAGS + RAE_OFLAG_COUNT) /* nslots triples: field, offset, index */
/* A slot's field word: the field id in the low bits; a keyed field (proc.env[NAME]) has above
 * RAE_SLOT_ARG_SHIFT the plan word index of its argument: a byte count, then the bytes packed
 * four to a word (after the triples). */
#define RAE_SLOT_ARG_SHIFT 8
#define RAE_SLOT_FIELD_MASK ((1 << RAE_SLOT_ARG_SHIFT) - 1)

/* Translation state, in and out (doubles, shared with the host as a Float64Array). */
#define RAE_IS_EVENTS 0   /* events written so far in this batch */
#define RAE_IS_MAX 1      /* most events the batch region holds */
#define RAE_IS_HEAP 2     /* next free byte of the string area (absolute address) */
#define RAE_IS_HEAP_END 3 /* end of the string area */
#define RAE_IS_NUM 4      /* evt.num of the last event */
#define RAE_IS_BASE 5     /* address of event 0's eval record */
#define RAE_IS_CONST 6    /* address of the constant blob in memory (0 = copy it first) */
#define RAE_IS_STOP 7     /* out: 1 = stopped at a process record, 2 = at a SYSCALL record the host translates (evt.arg.uid),
                           * 3 = at a SYSCALL record whose process has no thread entry (RAE_IS_LOOKUP), 0 = end of input or a bad record */
#define RAE_IS_EPOCH_LO 8 /* boot ns -> epoch ns (evt.rawtime), low 32 bits */
#define RAE_IS_EPOCH_HI 9 /* ... high 32 bits */
#define RAE_IS_LOOKUP 10  /* in: 1 = stop (3) at a SYSCALL record of a process with no thread entry, which the host fills first */
#define RAE_IS_WORDS 11

struct rae_ingest_io {
	const uint8_t *view;     /* kernel records */
	size_t bytes;            /* end of the records in view */
	uint8_t *mem;            /* the module's linear memory */
	size_t mem_len;
	const int32_t *plan;
	size_t plan_len;
	const uint8_t *blob;     /* constant strings */
	size_t blob_len;
	const uint32_t *tid_pid; /* tid -> pid */
	const uint32_t *pid_addr; /* pid -> thread entry */
	size_t pid_limit;
	double *state;           /* RAE_IS_* */
	uint32_t *offsets;       /* out: record offset of each event */
	size_t offsets_len;
	const uint64_t *starts;  /* process start (boot ns) by thread entry slot, 0 = unknown (proc.duration) */
	size_t starts_len;
};

/* Translates records from `start`; returns where it stopped (see RAE_IS_STOP), or -1 on a bad plan. */
long rae_ingest(const struct rae_ingest_io *io, size_t start);

#ifdef __cplusplus
}
#endif

#endif
