// A replay of known content for the rule-figures tests (test/runtime/rule-figures.test.ts,
// test/cli/profile.test.ts): rules, events, and every rule's exact evaluations and matches.

export const FIGURE_RULES = `
- rule: Shadow read
  desc: t
  condition: evt.type in (open, openat) and fd.name = /etc/shadow
  output: shadow (proc=%proc.name)
  priority: WARNING
- rule: Cat opens
  desc: t
  condition: evt.type = openat and proc.name = cat
  output: cat (file=%fd.name)
  priority: NOTICE
- rule: Shell exec
  desc: t
  condition: evt.type = execve and proc.name = sh
  output: sh (proc=%proc.name)
  priority: NOTICE
- rule: Audit create
  desc: t
  condition: ka.verb = create
  output: create (verb=%ka.verb)
  priority: NOTICE
  source: k8s_audit
`;

const line = (source: string, fields: Record<string, unknown>) => JSON.stringify({ source, time: '2026-01-02T03:04:05Z', fields });
const times = (n: number, s: string) => Array.from({ length: n }, () => s);

/** The replay: 6 openat (3 of /etc/shadow by cat, 2 other files by cat, 1 by ls), 1 open of /etc/shadow, 5 execve (4 by sh), 2 connect, 5 audit events (3 create). */
export const FIGURE_EVENTS = [
  ...times(3, line('syscall', { 'evt.type': 'openat', 'fd.name': '/etc/shadow', 'proc.name': 'cat' })),
  ...times(2, line('syscall', { 'evt.type': 'openat', 'fd.name': '/tmp/x', 'proc.name': 'cat' })),
  line('syscall', { 'evt.type': 'openat', 'fd.name': '/tmp/y', 'proc.name': 'ls' }),
  line('syscall', { 'evt.type': 'open', 'fd.name': '/etc/shadow', 'proc.name': 'vi' }),
  ...times(4, line('syscall', { 'evt.type': 'execve', 'proc.name': 'sh' })),
  line('syscall', { 'evt.type': 'execve', 'proc.name': 'bash' }),
  ...times(2, line('syscall', { 'evt.type': 'connect', 'proc.name': 'curl' })),
  ...times(3, line('k8s_audit', { 'ka.verb': 'create' })),
  ...times(2, line('k8s_audit', { 'ka.verb': 'get' })),
].join('\n');

/** Expected [evaluations, matches] by rule, per rule matching. */
export const EXPECTED_FIGURES = {
  first: { 'Shadow read': [7, 4], 'Cat opens': [3, 2], 'Shell exec': [5, 4], 'Audit create': [5, 3] },
  all: { 'Shadow read': [7, 4], 'Cat opens': [6, 5], 'Shell exec': [5, 4], 'Audit create': [5, 3] },
} as const;
