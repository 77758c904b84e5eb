/* SPDX-License-Identifier: Apache-2.0 */
/*
 * x86-64 numbers of the syscalls whose pointer arguments probe.bpf.c decodes (every other syscall
 * is recorded with its raw argument registers only). Mirrored by host/sources/syscall/syscalls.ts;
 * the layout test compares them. Source: arch/x86/entry/syscalls/syscall_64.tbl.
 */
#ifndef RAE_SYSCALLS_H
#define RAE_SYSCALLS_H

#define RAE_NR_SYSCALLS 512 /* size of the interesting-syscall table */

#define NR_open 2
#define NR_close 3
#define NR_dup 32
#define NR_dup2 33
#define NR_socket 41
#define NR_connect 42
#define NR_accept 43
#define NR_sendto 44
#define NR_recvfrom 45
#define NR_sendmsg 46
#define NR_recvmsg 47
#define NR_shutdown 48
#define NR_bind 49
#define NR_listen 50
#define NR_setsockopt 54
#define NR_getsockopt 55
#define NR_clone 56
#define NR_fork 57
#define NR_vfork 58
#define NR_execve 59
#define NR_kill 62
#define NR_fcntl 72
#define NR_chdir 80
#define NR_fchdir 81
#define NR_rename 82
#define NR_mkdir 83
#define NR_rmdir 84
#define NR_creat 85
#define NR_link 86
#define NR_unlink 87
#define NR_symlink 88
#define NR_chmod 90
#define NR_fchmod 91
#define NR_ptrace 101
#define NR_setuid 105
#define NR_setgid 106
#define NR_setreuid 113
#define NR_setregid 114
#define NR_setresuid 117
#define NR_setresgid 119
#define NR_init_module 175
#define NR_mkdirat 258
#define NR_openat 257
#define NR_unlinkat 263
#define NR_renameat 264
#define NR_linkat 265
#define NR_symlinkat 266
#define NR_fchmodat 268
#define NR_unshare 272
#define NR_accept4 288
#define NR_dup3 292
#define NR_setns 308
#define NR_finit_module 313
#define NR_renameat2 316
#define NR_memfd_create 319
#define NR_bpf 321
#define NR_execveat 322
#define NR_userfaultfd 323
#define NR_clone3 435
#define NR_openat2 437
#define NR_fchmodat2 452

/*
 * Syscalls whose only pointer argument the probe reads is their I/O buffer (rae_syscall.data), and
 * that only when the addon marks them RAE_INT_DATA; mirrored by DATA_ONLY in syscalls.ts.
 */
#define DNR_read 0
#define DNR_write 1
#define DNR_pread64 17
#define DNR_pwrite64 18
#define DNR_readv 19
#define DNR_writev 20
#define DNR_preadv 295
#define DNR_pwritev 296

#endif
