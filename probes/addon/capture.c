// SPDX-License-Identifier: Apache-2.0
/*
 * C core of the capture addon (see capture.h). The ring buffer is consumed through our own mmap
 * of its pages rather than libbpf's callback API: poll() copies whole records into the caller's
 * buffer and advances consumer_pos once per call, and stops before a record that does not fit
 * (libbpf 1.1's callbacks consume a record before they can refuse it). Waiting uses an
 * edge-triggered epoll registration of the ring fd, so waits end only on real kernel wakeups.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "capture.h"
#include "../src/events.h"
#include "../src/syscalls.h"
#include "probe.skel.h"

struct rae_capture {
	struct probe *skel;
	int ring_fd;
	size_t ring_size;
	size_t page;
	unsigned long *consumer_pos;
	const unsigned long *producer_pos;
	const uint8_t *data;
	void *prod_map;
	size_t prod_len;
	int epfd;
	int stopfd;
	int ncpus;
};

/* libbpf's messages during one open, kept whole (the last line alone is rarely the cause). */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char *log_dst;
static size_t log_cap, log_len;

static int collect_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !log_dst || log_len + 1 >= log_cap)
		return 0;
	int n = vsnprintf(log_dst + log_len, log_cap - log_len, fmt, ap);
	if (n > 0)
		log_len = log_len + (size_t)n < log_cap ? log_len + (size_t)n : log_cap - 1;
	return 0;
}

static void set_error(struct rae_capture_error *e, const char *code, int err, const char *what)
{
	char log[sizeof(e->message)];
	memcpy(log, e->message, sizeof(log));
	log[sizeof(log) - 1] = 0;
	size_t n = strlen(log);
	while (n > 0 && log[n - 1] == '\n')
		log[--n] = 0;
	snprintf(e->code, sizeof(e->code), "%s", code);
	e->err = err;
	snprintf(e->message, sizeof(e->message), "%s: %s%s%s", what, strerror(err), n ? "\n" : "", log);
}

/* Maps a libbpf load failure to a stable code, using the collected log to tell causes apart. */
static const char *classify(int err, const char *log)
{
	if (err == EPERM || err == EACCES)
		return "EPERM";
	if (strstr(log, "failed to find valid kernel BTF") || strstr(log, "Error loading vmlinux BTF"))
		return "ENOBTF";
	if (strstr(log, "failed to find kernel BTF type ID") || strstr(log, "failed to create tracepoint") ||
	    strstr(log, "failed to attach to raw tracepoint"))
		return "ENOTRACEPOINT";
	return "EPROBE";
}

static int map_ring(struct rae_capture *c)
{
	c->page = (size_t)sysconf(_SC_PAGESIZE);
	c->ring_fd = bpf_map__fd(c->skel->maps.ring);
	c->ring_size = bpf_map__max_entries(c->skel->maps.ring);
	c->consumer_pos = mmap(NULL, c->page, PROT_READ | PROT_WRITE, MAP_SHARED, c->ring_fd, 0);
	if (c->consumer_pos == MAP_FAILED)
		return -errno;
	c->prod_len = c->page + 2 * c->ring_size;
	c->prod_map = mmap(NULL, c->prod_len, PROT_READ, MAP_SHARED, c->ring_fd, (off_t)c->page);
	if (c->prod_map == MAP_FAILED)
		return -errno;
	c->producer_pos = c->prod_map;
	c->data = (const uint8_t *)c->prod_map + c->page;
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->epfd < 0 || c->stopfd < 0)
		return -errno;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u32 = 1 };
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->ring_fd, &ev))
		return -errno;
	struct epoll_event stop = { .events = EPOLLIN, .data.u32 = 2 };
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->stopfd, &stop))
		return -errno;
	return 0;
}

struct rae_capture *rae_capture_open(const struct rae_capture_opts *o, struct rae_capture_error *e)
{
	memset(e, 0, sizeof(*e));
	struct rae_capture *c = calloc(1, sizeof(*c));
	if (!c) {
		set_error(e, "ENOMEM", ENOMEM, "allocating the capture");
		return NULL;
	}
	c->ring_fd = c->epfd = c->stopfd = -1;
	pthread_mutex_lock(&log_lock);
	log_dst = e->message;
	log_cap = sizeof(e->message);
	log_len = 0;
	libbpf_print_fn_t old = libbpf_set_print(collect_log);
	const char *stage = "opening the probe";
	int err = 0;
	c->skel = probe__open();
	if (!c->skel) {
		err = errno ? errno : EINVAL;
		goto fail;
	}
	c->skel->rodata->cfg_self_tgid = o->self_tgid;
	c->skel->rodata->cfg_wake_bytes = o->wake_bytes;
	c->skel->rodata->cfg_env = o->no_env ? 0 : 1;
	c->skel->rodata->cfg_snaplen = o->snaplen;
	stage = "sizing the ring buffer";
	if ((err = -bpf_map__set_max_entries(c->skel->maps.ring, (uint32_t)o->ring_bytes)))
		goto fail;
	stage = "loading the probe";
	/* Signals are held while the verifier runs: a signal to this thread (V8's SIGPROF sampling
	 * under --cpu-prof, every millisecond) makes the load fail with EAGAIN, each retry too.
	 * Held ones are delivered when the mask is restored, a second or so later. */
	sigset_t all, mask;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &mask);
	err = -probe__load(c->skel);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (err)
		goto fail;
	stage = "attaching the probe";
	if ((err = -probe__attach(c->skel)))
		goto fail;
	stage = "mapping the ring buffer";
	if ((err = -map_ring(c)))
		goto fail;
	c->ncpus = libbpf_num_possible_cpus();
	libbpf_set_print(old);
	log_dst = NULL;
	pthread_mutex_unlock(&log_lock);
	return c;
fail:
	libbpf_set_print(old);
	log_dst = NULL;
	pthread_mutex_unlock(&log_lock);
	if (err < 0)
		err = -err;
	set_error(e, classify(err, e->message), err, stage);
	rae_capture_close(c);
	return NULL;
}

size_t rae_capture_poll(struct rae_capture *c, uint8_t *dst, size_t cap, uint32_t *records)
{
	unsigned long cons = *c->consumer_pos;
	unsigned long prod = __atomic_load_n(c->producer_pos, __ATOMIC_ACQUIRE);
	size_t out = 0;
	uint32_t n = 0;
	while (cons < prod) {
		const uint32_t *hdr = (const uint32_t *)(c->data + (cons & (c->ring_size - 1)));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		if (len & BPF_RINGBUF_BUSY_BIT)
			break; /* reserved, not yet committed */
		uint32_t dlen = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			if (out + dlen > cap)
				break;
			memcpy(dst + out, (const uint8_t *)hdr + BPF_RINGBUF_HDR_SZ, dlen);
			out += dlen;
			n++;
		}
		cons += (dlen + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
	}
	__atomic_store_n(c->consumer_pos, cons, __ATOMIC_RELEASE);
	*records = n;
	return out;
}

int rae_capture_pending(struct rae_capture *c)
{
	return __atomic_load_n(c->producer_pos, __ATOMIC_ACQUIRE) != *c->consumer_pos;
}

int rae_capture_wait(struct rae_capture *c, int timeout_ms)
{
	struct epoll_event evs[2];
	int n = epoll_wait(c->epfd, evs, 2, timeout_ms);
	for (int i = 0; i < n; i++)
		if (evs[i].data.u32 == 2)
			return -1;
	return n < 0 ? 0 : n;
}

void rae_capture_interrupt(struct rae_capture *c)
{
	uint64_t one = 1;
	if (c->stopfd >= 0 && write(c->stopfd, &one, sizeof(one)) < 0)
		perror("rae_capture_interrupt");
}

size_t rae_capture_set_syscalls(struct rae_capture *c, const uint32_t *ids, size_t n, const uint32_t *data_ids, size_t nd,
				const uint32_t *path_ids, size_t np)
{
	uint8_t *table = c->skel->bss->interesting;
	uint8_t next[RAE_NR_SYSCALLS] = { 0 };
	size_t accepted = 0;
	for (size_t i = 0; i < n; i++)
		if (ids[i] < RAE_NR_SYSCALLS) {
			next[ids[i]] = RAE_INT_RECORD;
			accepted++;
		}
	for (size_t i = 0; i < nd; i++)
		if (data_ids[i] < RAE_NR_SYSCALLS && next[data_ids[i]])
			next[data_ids[i]] |= RAE_INT_DATA;
	for (size_t i = 0; i < np; i++)
		if (path_ids[i] < RAE_NR_SYSCALLS && next[path_ids[i]])
			next[path_ids[i]] |= RAE_INT_PATHS;
	for (size_t i = 0; i < RAE_NR_SYSCALLS; i++)
		__atomic_store_n(&table[i], next[i], __ATOMIC_RELAXED);
	return accepted;
}

/* A process name as the probe keys it: its first 15 bytes (a comm's most), zero to the end. */
static struct rae_comm comm_key(const char *name, uint32_t len)
{
	struct rae_comm k;
	memset(&k, 0, sizeof(k));
	memcpy(k.c, name, len < RAE_COMM_BYTES - 1 ? len : RAE_COMM_BYTES - 1);
	return k;
}

/* Empties map `fd`: its first key (into `key`, of the map's key size) until there is none (a trie
 * has no order to resume from once deleted). 0, or a negative errno. */
static int empty_map(int fd, void *key)
{
	while (bpf_map_get_next_key(fd, NULL, key) == 0)
		if (bpf_map_delete_elem(fd, key) != 0)
			return -errno;
	return 0;
}

/* Replaces open_names' entries with the `n` names and turns their use on when there is one. */
static int set_open_names(struct rae_capture *c, const char *const *names, const uint32_t *lens, size_t n)
{
	int fd = bpf_map__fd(c->skel->maps.open_names);
	struct rae_comm key;
	__atomic_store_n(&c->skel->bss->open_names_on, 0, __ATOMIC_RELAXED);
	int err = empty_map(fd, &key);
	if (err != 0)
		return err;
	uint8_t one = 1;
	for (size_t i = 0; i < n; i++) {
		key = comm_key(names[i], lens[i]);
		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY) != 0)
			return -errno;
	}
	__atomic_store_n(&c->skel->bss->open_names_on, n > 0, __ATOMIC_RELAXED);
	return 0;
}

int rae_capture_set_proc_names(struct rae_capture *c, const uint32_t *pids, const char *const *names, const uint32_t *lens, size_t n)
{
	int fd = bpf_map__fd(c->skel->maps.proc_names);
	for (size_t i = 0; i < n; i++) {
		struct rae_comm name = comm_key(names[i], lens[i]);
		/* BPF_NOEXIST: a name the probe wrote (an exec or fork since the scan) is the newer one */
		if (bpf_map_update_elem(fd, &pids[i], &name, BPF_NOEXIST) != 0 && errno != EEXIST)
			return -errno;
	}
	return 0;
}

int rae_capture_set_open_paths(struct rae_capture *c, const char *const *paths, const uint32_t *lens, const uint8_t *exact, size_t n,
			       const char *const *names, const uint32_t *name_lens, size_t nn)
{
	int err = set_open_names(c, names, name_lens, nn);
	if (err != 0)
		return err;
	int fd = bpf_map__fd(c->skel->maps.open_paths);
	struct rae_open_key key;
	err = empty_map(fd, &key);
	if (err != 0)
		return err;
	uint8_t one = 1;
	for (size_t i = 0; i < n; i++) {
		if (lens[i] > RAE_OPEN_KEY_BYTES - 2)
			return -E2BIG;
		memset(&key, 0, sizeof(key));
		memcpy(key.data, paths[i], lens[i]);
		key.prefixlen = (lens[i] + (exact[i] ? 1 : 0)) * 8; /* an exact name's entry takes its NUL too */
		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY) != 0)
			return -errno;
	}
	return 0;
}

void rae_capture_counters(struct rae_capture *c, struct rae_counters *out)
{
	memset(out, 0, sizeof(*out));
	struct rae_stats *per = calloc((size_t)c->ncpus, sizeof(*per));
	uint32_t zero = 0;
	if (per && bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.stats), &zero, per) == 0) {
		for (int i = 0; i < c->ncpus; i++) {
			out->emitted += per[i].emitted;
			out->lost += per[i].lost;
			out->seen += per[i].seen;
			out->truncated += per[i].truncated;
		}
	}
	free(per);
}

void rae_capture_ring(struct rae_capture *c, uint64_t *queued, uint64_t *size)
{
	*queued = __atomic_load_n(c->producer_pos, __ATOMIC_ACQUIRE) - *c->consumer_pos;
	*size = c->ring_size;
}

void rae_capture_close(struct rae_capture *c)
{
	if (!c)
		return;
	if (c->prod_map && c->prod_map != MAP_FAILED)
		munmap(c->prod_map, c->prod_len);
	if (c->consumer_pos && (void *)c->consumer_pos != MAP_FAILED)
		munmap(c->consumer_pos, c->page);
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->stopfd >= 0)
		close(c->stopfd);
	probe__destroy(c->skel);
	free(c);
}

int rae_kernel_check(struct rae_capture_error *e)
{
	static const char *const tps[] = { "sys_exit", "sched_process_exec", "sched_process_fork",
					   "sched_process_exit" };
	memset(e, 0, sizeof(*e));
	struct btf *btf = btf__load_vmlinux_btf();
	if (!btf) {
		snprintf(e->code, sizeof(e->code), "ENOBTF");
		e->err = errno;
		snprintf(e->message, sizeof(e->message), "kernel BTF is not available (/sys/kernel/btf/vmlinux): %s",
			 strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "btf_trace_%s", tps[i]);
		if (btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) < 0) {
			snprintf(e->code, sizeof(e->code), "ENOTRACEPOINT");
			e->err = ENOENT;
			snprintf(e->message, sizeof(e->message), "kernel has no BTF tracepoint %s", tps[i]);
			btf__free(btf);
			return -1;
		}
	}
	btf__free(btf);
	return 0;
}
