// Grape-style parameter validation: boolean coercion table and message order.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { coerceBoolean, mergeParams, validateParams, type ParamSpec } from '../../host/api/params.js';

test('booleans coerce like dry-types Params::Bool; others are invalid', () => {
  const table: Array<[unknown, boolean | null | undefined]> = [
    [true, true],
    [false, false],
    ['true', true],
    ['TRUE', true],
    ['True', true],
    ['t', true],
    ['1', true],
    [1, true],
    ['yes', true],
    ['on', true],
    ['Y', true],
    ['false', false],
    ['f', false],
    ['0', false],
    [0, false],
    ['no', false],
    ['off', false],
    ['N', false],
    ['', null],
    [null, null],
    ['tRuE', undefined],
    ['randomstring', undefined],
    [2, undefined],
    [' true', undefined],
    [[true], undefined],
    [{}, undefined],
  ];
  for (const [input, want] of table) assert.is(coerceBoolean(input), want, JSON.stringify(input));
});

test('messages: declaration order, all parameters, Grape wording', () => {
  const specs: ParamSpec[] = [
    { name: 'active', type: 'boolean', required: true, allowBlank: false },
    { name: 'integrated', type: 'boolean', required: true, nullable: false },
    { name: 'page', type: 'integer' },
    { name: 'sort', type: 'string', values: ['a', 'b'] },
  ];
  const msg = (input: Record<string, unknown>) => {
    const r = validateParams(specs, input);
    return r.ok ? r.values : (r.error.body as { error: string }).error;
  };
  assert.is(msg({}), 'active is missing, active is empty, integrated is missing');
  assert.is(msg({ active: '', integrated: '' }), 'active is empty, integrated is empty');
  assert.is(msg({ active: 'x', integrated: true, page: '2.5', sort: 'c' }), 'active is invalid, page is invalid, sort does not have a valid value');
  assert.equal(msg({ active: 'false', integrated: '1', page: ' 3 ', sort: 'b' }), { active: false, integrated: true, page: 3, sort: 'b' });
  assert.equal(msg({ active: false, integrated: false }), { active: false, integrated: false, page: null, sort: null });
});

test('query and body merge; the body wins; non-objects are ignored', () => {
  assert.equal(mergeParams({ a: '1', b: '2' }, { b: false }), { a: '1', b: false });
  assert.equal(mergeParams({ a: '1' }, [1, 2]), { a: '1' });
  assert.equal(mergeParams(undefined, 'text'), {});
});

test.run();
