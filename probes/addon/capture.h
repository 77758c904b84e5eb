/* SPDX-License-Identifier: Apache-2.0 */
/*
 * C core of the capture addon: loads and attaches the probe (libbpf skeleton), maps the ring
 * buffer and copies whole records out of it. No Node types here; addon.cc wraps it.
 */
#ifndef RAE_CAPTURE_H
#define RAE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rae_capture;

struct rae_capture_opts {
	uint32_t self_tgid;     /* records of this process are not produced (0 = keep all) */
	uint64_t ring_bytes;    /* power of two, multiple of the page size */
	uint64_t wake_bytes;    /* watermark at which the kernel wakes the consumer */
	uint32_t no_env;        /* 1 = EXEC records leave out the environment (probe cfg_env 0) */
	uint32_t snaplen;       /* bytes of a syscall's I/O buffer recorded (Falco's snaplen), at most RAE_MAX_DATA */
};

/* Why an open failed: a stable code ("EPERM", "ENOBTF", "ENOTRACEPOINT", "EPROBE"), the errno and
 * every libbpf warning printed during the attempt. */
struct rae_capture_error {
	char code[24];
	int err;
	char message[4096];
};

struct rae_counters {
	uint64_t emitted, lost, seen, truncated;
};

/* Loads, attaches and maps the probe. Returns NULL and fills *e on failure. */
struct rae_capture *rae_capture_open(const struct rae_capture_opts *o, struct rae_capture_error *e);
/* Copies whole records (never a part of one) into dst; returns bytes copied, *records their count. */
size_t rae_capture_poll(struct rae_capture *c, uint8_t *dst, size_t cap, uint32_t *records);
/* Whether unread records are queued. */
int rae_capture_pending(struct rae_capture *c);
/* Waits up to timeout_ms for a kernel wakeup; returns -1 once rae_capture_interrupt was called. */
int rae_capture_wait(struct rae_capture *c, int timeout_ms);
/* Makes a concurrent rae_capture_wait return -1 (from any thread). */
void rae_capture_interrupt(struct rae_capture *c);
/* Replaces the interesting-syscall table: the `n` ids are recorded, those of them also among the
 * `nd` data_ids with their I/O buffer, those among the `np` path_ids (opens) read-only only when
 * their path is in the open_paths trie (rae_capture_set_open_paths); ids outside the table are
 * ignored. Returns ids accepted. */
size_t rae_capture_set_syscalls(struct rae_capture *c, const uint32_t *ids, size_t n, const uint32_t *data_ids, size_t nd,
				const uint32_t *path_ids, size_t np);
/* Replaces the open_paths trie's entries with the `n` paths (`lens` bytes each, at most
 * RAE_OPEN_KEY_BYTES - 2): a prefix, or where exact[i] an exact name; and open_names' with the
 * `nn` process names (`name_lens` bytes each; the probe compares the first 15), consulted when
 * there is one. 0, or a negative errno (the maps may then hold part of them: mark no syscall
 * RAE_INT_PATHS). */
int rae_capture_set_open_paths(struct rae_capture *c, const char *const *paths, const uint32_t *lens, const uint8_t *exact, size_t n,
			       const char *const *names, const uint32_t *name_lens, size_t nn);
/* Gives the probe the names (comm, `lens` bytes each) of the `n` processes `pids` as the engine's
 * table took them from the /proc scan, where the probe has no name for the process (proc_names in
 * probe.bpf.c). 0, or a negative errno. */
int rae_capture_set_proc_names(struct rae_capture *c, const uint32_t *pids, const char *const *names, const uint32_t *lens, size_t n);
/* Kernel counters summed over CPUs. */
void rae_capture_counters(struct rae_capture *c, struct rae_counters *out);
/* Bytes queued in the ring and its size. */
void rae_capture_ring(struct rae_capture *c, uint64_t *queued, uint64_t *size);
/* Detaches and frees everything. */
void rae_capture_close(struct rae_capture *c);
/* Checks kernel BTF and the tracepoints the probe attaches to; 0 = fine, else fills *e. */
int rae_kernel_check(struct rae_capture_error *e);

#ifdef __cplusplus
}
#endif

#endif
