// The evaluator's layout has one source of truth, probes/src/eval_abi.h (included from events.h):
// this test compiles a C program with the header (clang, installed by scripts/setup.sh) that
// prints every macro and every struct offset/size the C compiler computes, and fails on any
// drift in the host mirror (host/abi/module.ts) or the AssemblyScript mirror (assembly/abi.ts).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ABI_VERSION, CTR, CTR_START_BIT, DNS, MATCH_REFERENCE, MATCH_SIZE, MEM, LIMITS, REC, SRC, STATE, THREAD, TP, TF } from '../../host/abi/module.js';

const HEADER = readFileSync('probes/src/eval_abi.h', 'utf8');
const macros = [...HEADER.matchAll(/^#define (RAE_[A-Z0-9_]+) /gm)]
  .map((m) => m[1]!)
  .filter((m) => m !== 'RAE_EVAL_ABI_H')
  .concat('RAE_ABI_VERSION');
const threadFields = Object.keys(THREAD).filter((k) => k !== 'size');

/** Everything the C compiler says, by name. */
function fromC(): Map<string, number> {
  const dir = mkdtempSync(join(tmpdir(), 'rae-abi-'));
  try {
    const lines = [
      '#include <stdio.h>',
      '#include <stddef.h>',
      '#include <linux/types.h>',
      `#include "${resolve('probes/src/events.h')}"`,
      'int main(void) {',
      ...macros.map((m) => `  printf("${m} %lld\\n", (long long)(${m}));`),
      ...threadFields.map((f) => `  printf("thread.${f} %zu\\n", offsetof(struct rae_thread, ${f}));`),
      '  printf("thread.size %zu\\n", sizeof(struct rae_thread));',
      '  printf("rec.type %zu\\nrec.thread %zu\\nrec.size %zu\\n", offsetof(struct rae_eval_rec, type), offsetof(struct rae_eval_rec, thread), sizeof(struct rae_eval_rec));',
      '  printf("fd.size %zu\\nname.size %zu\\nmatch.size %zu\\nref.size %zu\\nstate_hdr.heap_top %zu\\n", sizeof(struct rae_fd), sizeof(struct rae_name), sizeof(struct rae_match), sizeof(struct rae_ref), offsetof(struct rae_state_hdr, heap_top));',
      '  return 0;',
      '}',
    ];
    writeFileSync(join(dir, 'abi.c'), lines.join('\n'));
    execFileSync('clang', ['-Wall', '-Werror', '-o', join(dir, 'abi'), join(dir, 'abi.c')]);
    const out = execFileSync(join(dir, 'abi'), { encoding: 'utf8' });
    return new Map(
      out
        .trim()
        .split('\n')
        .map((l) => [l.split(' ')[0]!, Number(l.split(' ')[1])]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const c = fromC();
const want = (name: string) => {
  const v = c.get(name);
  assert.ok(v !== undefined, `the C side has no ${name}`);
  return v!;
};

test('abi layout: memory map, limits, sources, record header and match size match the header', () => {
  assert.is(want('RAE_ABI_VERSION'), ABI_VERSION);
  const mem: Record<string, number> = {
    RAE_EVAL_PAGES: MEM.pages,
    RAE_EVAL_MEMORY_BYTES: MEM.bytes,
    RAE_EVAL_STATIC_END: MEM.staticEnd,
    RAE_EVAL_STATE_BASE: MEM.stateBase,
    RAE_EVAL_STATE_SIZE: MEM.stateSize,
    RAE_EVAL_BATCH_BASE: MEM.batchBase,
    RAE_EVAL_BATCH_SIZE: MEM.batchSize,
    RAE_EVAL_OUT_BASE: MEM.outBase,
    RAE_EVAL_OUT_SIZE: MEM.outSize,
    RAE_EVAL_SCRATCH_BASE: MEM.scratchBase,
    RAE_EVAL_SCRATCH_SIZE: MEM.scratchSize,
    RAE_EVAL_MAX_DEPTH: LIMITS.maxDepth,
    RAE_SRC_SYSCALL: SRC.syscall,
    RAE_SRC_K8S_AUDIT: SRC.k8s_audit,
    RAE_REC_TYPE: REC.type,
    RAE_REC_THREAD: REC.thread,
    RAE_REC_PRESENT: REC.present,
    RAE_MATCH_SIZE: MATCH_SIZE,
    RAE_MATCH_REFERENCE: MATCH_REFERENCE,
    RAE_THREAD_SIZE: THREAD.size,
    RAE_STATE_HDR_SIZE: STATE.hdrSize,
    RAE_STATE_THREADS: STATE.threads,
    RAE_STATE_THREAD_SLOTS: STATE.threadSlots,
    RAE_STATE_FDS: STATE.fds,
    RAE_STATE_FD_SLOTS: STATE.fdSlots,
    RAE_FD_SIZE: STATE.fdSize,
    RAE_STATE_USERS: STATE.users,
    RAE_STATE_NAME_SLOTS: STATE.nameSlots,
    RAE_NAME_SIZE: STATE.nameSize,
    RAE_STATE_GROUPS: STATE.groups,
    RAE_STATE_HEAP: STATE.heap,
    RAE_STATE_CONTAINERS: STATE.containers,
    RAE_CTR_SIZE: CTR.size,
    RAE_CTR_SLOTS: CTR.slots,
    RAE_CTR_REFS: CTR.refSlots,
    RAE_CTR_KEYS: CTR.keySlots,
    RAE_CTR_PRESENT: CTR.present,
    RAE_CTR_START_TS: CTR.startTs,
    RAE_CP_START_TS: CTR_START_BIT,
    RAE_STATE_DNS: STATE.dns,
    RAE_DNS_SIZE: DNS.size,
    RAE_DNS_SLOTS: DNS.slots,
    RAE_DNS_ENTRY_SIZE: DNS.entrySize,
    RAE_DNS_COUNT: DNS.count,
    RAE_DNS_ENTRIES: DNS.entries,
    RAE_DNS_ALEN: DNS.alen,
    RAE_DNS_NAME: DNS.name,
  };
  for (const [k, v] of Object.entries(mem)) assert.is(v, want(k), k);
  assert.is(MEM.bytes, MEM.pages * 65536);
  assert.is(want('rec.type'), REC.type);
  assert.is(want('rec.thread'), REC.thread);
  assert.is(want('rec.size'), REC.present);
  assert.is(want('match.size'), MATCH_SIZE);
  assert.is(want('fd.size'), STATE.fdSize);
  assert.is(want('name.size'), STATE.nameSize);
});

test('abi layout: every struct rae_thread offset, present bit and flag matches', () => {
  for (const f of threadFields) assert.is(THREAD[f as keyof typeof THREAD], want(`thread.${f}`), `rae_thread.${f}`);
  assert.is(THREAD.size, want('thread.size'));
  for (const [k, v] of Object.entries(TP)) assert.is(v, want(`RAE_TP_${k}`), `RAE_TP_${k}`);
  for (const [k, v] of Object.entries(TF)) assert.is(v, want(`RAE_TF_${k}`), `RAE_TF_${k}`);
  assert.ok(STATE.heap < STATE.dns, 'the state tables fit in the state region');
  assert.ok(DNS.entries + DNS.slots * DNS.entrySize < DNS.size, 'the DNS table has room for names');
  assert.ok(CTR.strings < CTR.size, 'a container entry has room for strings');
});

test('abi layout: the AssemblyScript mirror (assembly/abi.ts) has the same numbers', () => {
  const as = readFileSync('assembly/abi.ts', 'utf8');
  const consts = new Map([...as.matchAll(/^export const ([A-Z0-9_]+): \w+ = (0x[0-9a-f]+|\d+);/gm)].map((m) => [m[1]!, Number(m[2])]));
  const pairs: Array<[string, string]> = [
    ['ABI_VERSION', 'RAE_ABI_VERSION'],
    ['EVAL_PAGES', 'RAE_EVAL_PAGES'],
    ['EVAL_STATIC_END', 'RAE_EVAL_STATIC_END'],
    ['EVAL_STATE_BASE', 'RAE_EVAL_STATE_BASE'],
    ['EVAL_STATE_SIZE', 'RAE_EVAL_STATE_SIZE'],
    ['EVAL_BATCH_BASE', 'RAE_EVAL_BATCH_BASE'],
    ['EVAL_BATCH_SIZE', 'RAE_EVAL_BATCH_SIZE'],
    ['EVAL_OUT_BASE', 'RAE_EVAL_OUT_BASE'],
    ['EVAL_OUT_SIZE', 'RAE_EVAL_OUT_SIZE'],
    ['EVAL_SCRATCH_BASE', 'RAE_EVAL_SCRATCH_BASE'],
    ['EVAL_SCRATCH_SIZE', 'RAE_EVAL_SCRATCH_SIZE'],
    ['EVAL_MAX_DEPTH', 'RAE_EVAL_MAX_DEPTH'],
    ['REC_TYPE', 'RAE_REC_TYPE'],
    ['REC_THREAD', 'RAE_REC_THREAD'],
    ['REC_PRESENT', 'RAE_REC_PRESENT'],
    ['THREAD_PID', 'thread.pid'],
    ['THREAD_PARENT', 'thread.parent'],
    ['THREAD_PRESENT', 'thread.present'],
    ['THREAD_FLAGS', 'thread.flags'],
    ['THREAD_SIZE', 'thread.size'],
    ['MATCH_SIZE', 'RAE_MATCH_SIZE'],
    ['MATCH_REFERENCE', 'RAE_MATCH_REFERENCE'],
  ];
  for (const [asName, cName] of pairs) assert.is(consts.get(asName), want(cName), `assembly/abi.ts ${asName}`);
  assert.is(consts.size, pairs.length, 'every constant of assembly/abi.ts is checked');
});

test.run();
