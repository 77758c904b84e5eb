// proc.env's heap layout (host/sources/syscall/env-index.ts): the blank-joined text libsinsp's
// concatenate_all_env gives, and proc.env[NAME] as sinsp_threadinfo::get_env(name) finds it (the
// first variable longer than NAME= that starts with it, blanks stripped, "" otherwise), on a
// table of environments; the allocation's size covers the text and the variable lengths.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { envBytes, envSpan, envValue, writeEnv } from '../../../host/sources/syscall/env-index.js';

/** The environment `vars` (NUL-separated) written at byte 16 of a fresh buffer, as the thread table writes it. */
function written(vars: string[]): { u8: Uint8Array; addr: number; len: number; size: number } {
  const raw = Buffer.from(vars.join('\0'), 'latin1');
  const size = envBytes(raw);
  const u8 = new Uint8Array(16 + size + 16).fill(0xee);
  writeEnv(u8, 16, raw);
  return { u8, addr: 16, len: raw.length, size };
}

const CASES: Array<[vars: string[], name: string, value: string]> = [
  [['A=1', 'B=2'], 'A', '1'],
  [['A=1', 'B=2'], 'B', '2'],
  [['A=1', 'B=2'], 'C', ''],
  [['AB=1', 'A=2'], 'A', '2'], // a longer name is not the variable
  [['A=', 'A=x'], 'A', 'x'], // "A=" is not longer than "A=": the next one is taken
  [['A=  x y  '], 'A', 'x y'], // blanks stripped at both ends, kept inside
  [['A=   '], 'A', ''],
  [['A=1', 'A=2'], 'A', '1'], // the first wins
  [['X=a B=c', 'B=d'], 'B', 'd'], // a blank inside a value is no variable boundary
  [['A=b=c'], 'A', 'b=c'],
  [[], 'A', ''],
  [['', 'A=1'], 'A', '1'], // an empty variable (two NULs in a row)
  [['=v', 'A=1'], '', 'v'],
];

test('env-index: proc.env is the variables joined by blanks, proc.env[NAME] libsinsp get_env(name)', () => {
  for (const [vars, name, value] of CASES) {
    const w = written(vars);
    const label = `${JSON.stringify(vars)}[${name}]`;
    assert.is(Buffer.from(w.u8.subarray(w.addr, w.addr + w.len)).toString('latin1'), vars.join(' '), label);
    const [at, len] = envValue(w.u8, w.addr, w.len, Buffer.from(name));
    assert.is(Buffer.from(w.u8.subarray(at, at + len)).toString('latin1'), value, label);
    assert.is(envSpan(w.u8, w.addr, w.len), w.size, label);
    assert.is(w.u8[w.addr + w.size], 0xee, `${label}: nothing written past the allocation`);
  }
});

test.run();
