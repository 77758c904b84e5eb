// x86-64 syscall numbers by name: the table that turns rule `evt.type` names into the ids the
// probe's interesting-syscall table takes (Capture.setInterestingSyscalls). Built from Linux's
// arch/x86/entry/syscalls/syscall_64.tbl (Debian's asm/unistd_64.h plus 452..467 from 6.6-6.15);
// '-' marks an unused number. DECODED mirrors probes/src/syscalls.h: the syscalls whose pointer
// arguments the probe reads (strings, socket addresses); every other syscall is recorded with its
// raw argument registers. The layout test compares DECODED with syscalls.h.

const TABLE = [
  'read write open close stat fstat lstat poll lseek mmap', // 0
  'mprotect munmap brk rt_sigaction rt_sigprocmask rt_sigreturn ioctl pread64 pwrite64 readv', // 10
  'writev access pipe select sched_yield mremap msync mincore madvise shmget', // 20
  'shmat shmctl dup dup2 pause nanosleep getitimer alarm setitimer getpid', // 30
  'sendfile socket connect accept sendto recvfrom sendmsg recvmsg shutdown bind', // 40
  'listen getsockname getpeername socketpair setsockopt getsockopt clone fork vfork execve', // 50
  'exit wait4 kill uname semget semop semctl shmdt msgget msgsnd', // 60
  'msgrcv msgctl fcntl flock fsync fdatasync truncate ftruncate getdents getcwd', // 70
  'chdir fchdir rename mkdir rmdir creat link unlink symlink readlink', // 80
  'chmod fchmod chown fchown lchown umask gettimeofday getrlimit getrusage sysinfo', // 90
  'times ptrace getuid syslog getgid setuid setgid geteuid getegid setpgid', // 100
  'getppid getpgrp setsid setreuid setregid getgroups setgroups setresuid getresuid setresgid', // 110
  'getresgid getpgid setfsuid setfsgid getsid capget capset rt_sigpending rt_sigtimedwait rt_sigqueueinfo', // 120
  'rt_sigsuspend sigaltstack utime mknod uselib personality ustat statfs fstatfs sysfs', // 130
  'getpriority setpriority sched_setparam sched_getparam sched_setscheduler sched_getscheduler sched_get_priority_max sched_get_priority_min sched_rr_get_interval mlock', // 140
  'munlock mlockall munlockall vhangup modify_ldt pivot_root _sysctl prctl arch_prctl adjtimex', // 150
  'setrlimit chroot sync acct settimeofday mount umount2 swapon swapoff reboot', // 160
  'sethostname setdomainname iopl ioperm create_module init_module delete_module get_kernel_syms query_module quotactl', // 170
  'nfsservctl getpmsg putpmsg afs_syscall tuxcall security gettid readahead setxattr lsetxattr', // 180
  'fsetxattr getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr removexattr lremovexattr fremovexattr', // 190
  'tkill time futex sched_setaffinity sched_getaffinity set_thread_area io_setup io_destroy io_getevents io_submit', // 200
  'io_cancel get_thread_area lookup_dcookie epoll_create epoll_ctl_old epoll_wait_old remap_file_pages getdents64 set_tid_address restart_syscall', // 210
  'semtimedop fadvise64 timer_create timer_settime timer_gettime timer_getoverrun timer_delete clock_settime clock_gettime clock_getres', // 220
  'clock_nanosleep exit_group epoll_wait epoll_ctl tgkill utimes vserver mbind set_mempolicy get_mempolicy', // 230
  'mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr kexec_load waitid add_key request_key', // 240
  'keyctl ioprio_set ioprio_get inotify_init inotify_add_watch inotify_rm_watch migrate_pages openat mkdirat mknodat', // 250
  'fchownat futimesat newfstatat unlinkat renameat linkat symlinkat readlinkat fchmodat faccessat', // 260
  'pselect6 ppoll unshare set_robust_list get_robust_list splice tee sync_file_range vmsplice move_pages', // 270
  'utimensat epoll_pwait signalfd timerfd_create eventfd fallocate timerfd_settime timerfd_gettime accept4 signalfd4', // 280
  'eventfd2 epoll_create1 dup3 pipe2 inotify_init1 preadv pwritev rt_tgsigqueueinfo perf_event_open recvmmsg', // 290
  'fanotify_init fanotify_mark prlimit64 name_to_handle_at open_by_handle_at clock_adjtime syncfs sendmmsg setns getcpu', // 300
  'process_vm_readv process_vm_writev kcmp finit_module sched_setattr sched_getattr renameat2 seccomp getrandom memfd_create', // 310
  'kexec_file_load bpf execveat userfaultfd membarrier mlock2 copy_file_range preadv2 pwritev2 pkey_mprotect', // 320
  'pkey_alloc pkey_free statx io_pgetevents rseq - - - - -', // 330
  '- - - - - - - - - -', // 340
  '- - - - - - - - - -', // 350
  '- - - - - - - - - -', // 360
  '- - - - - - - - - -', // 370
  '- - - - - - - - - -', // 380
  '- - - - - - - - - -', // 390
  '- - - - - - - - - -', // 400
  '- - - - - - - - - -', // 410
  '- - - - pidfd_send_signal io_uring_setup io_uring_enter io_uring_register open_tree move_mount', // 420
  'fsopen fsconfig fsmount fspick pidfd_open clone3 close_range openat2 pidfd_getfd faccessat2', // 430
  'process_madvise epoll_pwait2 mount_setattr quotactl_fd landlock_create_ruleset landlock_add_rule landlock_restrict_self memfd_secret process_mrelease futex_waitv', // 440
  'set_mempolicy_home_node - fchmodat2 map_shadow_stack futex_wake futex_wait futex_requeue statmount listmount lsm_get_self_attr', // 450
  'lsm_set_self_attr lsm_list_modules mseal setxattrat getxattrat listxattrat removexattrat open_tree_attr', // 460
]
  .join(' ')
  .split(' ');

/** Syscall name by x86-64 number ('' when unused or unknown). */
export function syscallName(nr: number): string {
  const name = TABLE[nr];
  return name === undefined || name === '-' ? '' : name;
}

const BY_NAME = new Map<string, number>(TABLE.flatMap((n, i) => (n === '-' ? [] : [[n, i] as [string, number]])));

/** x86-64 number of a syscall name, or undefined. */
export function syscallNr(name: string): number | undefined {
  return BY_NAME.get(name);
}

/** RAE_NR_SYSCALLS: size of the probe's interesting-syscall table. */
export const NR_SYSCALLS = 512;

/** Syscalls whose only pointer argument the probe reads is their I/O buffer, when asked to (DNR_* of probes/src/syscalls.h). */
export const DATA_ONLY = ['read', 'write', 'pread64', 'pwrite64', 'readv', 'writev', 'preadv', 'pwritev'] as const;

/** Syscalls whose pointer arguments the probe decodes (mirror of probes/src/syscalls.h). */
export const DECODED = [
  'open',
  'close',
  'dup',
  'dup2',
  'socket',
  'connect',
  'accept',
  'sendto',
  'recvfrom',
  'sendmsg',
  'recvmsg',
  'shutdown',
  'bind',
  'listen',
  'setsockopt',
  'getsockopt',
  'clone',
  'fork',
  'vfork',
  'execve',
  'kill',
  'fcntl',
  'chdir',
  'fchdir',
  'rename',
  'mkdir',
  'rmdir',
  'creat',
  'link',
  'unlink',
  'symlink',
  'chmod',
  'fchmod',
  'ptrace',
  'setuid',
  'setgid',
  'setreuid',
  'setregid',
  'setresuid',
  'setresgid',
  'init_module',
  'mkdirat',
  'openat',
  'unlinkat',
  'renameat',
  'linkat',
  'symlinkat',
  'fchmodat',
  'unshare',
  'accept4',
  'dup3',
  'setns',
  'finit_module',
  'renameat2',
  'memfd_create',
  'bpf',
  'execveat',
  'userfaultfd',
  'clone3',
  'openat2',
  'fchmodat2',
] as const;

/**
 * Ids for a set of syscall names (e.g. a ruleset's evt.type set plus what the process state needs);
 * names this table does not know are returned separately so the caller can report them.
 */
export function syscallIds(names: Iterable<string>): { ids: number[]; unknown: string[] } {
  const ids = new Set<number>();
  const unknown: string[] = [];
  for (const name of names) {
    const nr = BY_NAME.get(name);
    if (nr === undefined || nr >= NR_SYSCALLS) unknown.push(name);
    else ids.add(nr);
  }
  return { ids: [...ids].sort((a, b) => a - b), unknown };
}
