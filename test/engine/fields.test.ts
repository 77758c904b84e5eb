// Field registry: table facts checked against the upstream tables (reference/falco-language.md
// A.8, D.2, E), resolution of condition fields with libsinsp's messages, and the output-format
// prefix match.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEPRECATED_FIELDS, fieldTable, matchFieldPrefix, resolveField, SOURCES, SYSCALL_SUGGESTED_OUTPUT, suggestedOutput, typeClass, type FieldDef, type Source } from '../../host/engine/fields.js';

test('every source has a table without duplicate names, each entry tagged with its source', () => {
  for (const source of SOURCES) {
    const table = fieldTable(source);
    const names = table.map((d) => d.name);
    assert.is(new Set(names).size, names.length, `duplicates in ${source}`);
    for (const d of table) assert.is(d.source, source, d.name);
  }
});

test('required and allowed arguments never coexist with a missing argument kind', () => {
  for (const source of SOURCES) {
    for (const d of fieldTable(source)) {
      if (d.dottedArg) assert.ok(d.arg !== 'none', `${d.name} is dotted but takes no argument`);
      if (d.isList) assert.ok(d.type === 'PT_CHARBUF', `${d.name}: list fields here are strings`);
    }
  }
});

// [source, name, type, flags] — facts from the libsinsp tables and the plugins (reference E).
const FACTS: Array<[Source, string, FieldDef['type'], Partial<FieldDef>]> = [
  ['syscall', 'proc.aname', 'PT_CHARBUF', { arg: 'allowed', argKind: 'index', noRhs: true, noTransformer: true, provider: 'libsinsp' }],
  ['syscall', 'proc.apid', 'PT_INT64', { arg: 'allowed', argKind: 'index', noRhs: true }],
  ['syscall', 'proc.tty', 'PT_UINT32', { arg: 'none' }],
  ['syscall', 'proc.duration', 'PT_RELTIME', {}],
  ['syscall', 'proc.exe_ino.ctime', 'PT_ABSTIME', {}],
  ['syscall', 'proc.env', 'PT_CHARBUF', { arg: 'allowed', argKind: 'key' }],
  ['syscall', 'user.loginuid', 'PT_INT64', {}],
  ['syscall', 'user.uid', 'PT_UINT32', {}],
  ['syscall', 'group.gid', 'PT_UINT32', {}],
  ['syscall', 'evt.arg', 'PT_CHARBUF', { arg: 'required', dottedArg: true }],
  ['syscall', 'evt.rawres', 'PT_INT64', {}],
  ['syscall', 'evt.num', 'PT_UINT64', {}],
  ['syscall', 'evt.buffer', 'PT_BYTEBUF', {}],
  ['syscall', 'evt.is_open_read', 'PT_BOOL', {}],
  ['syscall', 'fd.ip', 'PT_IPADDR', { filterOnly: true, noRhs: true, noTransformer: true }],
  ['syscall', 'fd.net', 'PT_IPNET', { filterOnly: true }],
  ['syscall', 'fd.snet', 'PT_IPNET', { filterOnly: true }],
  ['syscall', 'fd.sip', 'PT_IPADDR', { filterOnly: false }],
  ['syscall', 'fd.sip.name', 'PT_CHARBUF', { noRhs: true, noTransformer: true, filterOnly: false }],
  ['syscall', 'fd.lport', 'PT_PORT', {}],
  ['syscall', 'fd.num', 'PT_INT64', {}],
  ['syscall', 'container.id', 'PT_CHARBUF', { suggested: true, provider: 'container plugin' }],
  ['syscall', 'container.privileged', 'PT_BOOL', { provider: 'container plugin' }],
  ['syscall', 'container.start_ts', 'PT_ABSTIME', {}],
  ['syscall', 'container.mount.dest', 'PT_CHARBUF', { arg: 'required', argKind: 'any' }],
  ['syscall', 'k8s.ns.name', 'PT_CHARBUF', { suggested: true }],
  ['k8s_audit', 'ka.uri.param', 'PT_CHARBUF', { arg: 'required', argKind: 'key', provider: 'k8saudit plugin' }],
  ['k8s_audit', 'ka.req.pod.containers.image.repository', 'PT_CHARBUF', { isList: true, arg: 'allowed', argKind: 'index' }],
  ['k8s_audit', 'ka.req.binding.subjects', 'PT_CHARBUF', { isList: true, arg: 'none' }],
  ['k8s_audit', 'ka.user.groups', 'PT_CHARBUF', { isList: true }],
  ['k8s_audit', 'ka.sourceips', 'PT_CHARBUF', { isList: true, arg: 'allowed', argKind: 'index' }],
  ['k8s_audit', 'ka.req.pod.host_ipc', 'PT_CHARBUF', { isList: false }],
  ['k8s_audit', 'jevt.value', 'PT_CHARBUF', { arg: 'required', argKind: 'key', provider: 'json plugin' }],
  ['k8s_audit', 'jevt.rawtime', 'PT_CHARBUF', { arg: 'none' }],
  ['k8s_audit', 'evt.time', 'PT_CHARBUF', { provider: 'libsinsp' }],
];

for (const [source, name, type, flags] of FACTS) {
  test(`${source} field ${name} is ${type} with upstream flags`, () => {
    const d = fieldTable(source).find((x) => x.name === name);
    assert.ok(d, `${name} missing`);
    assert.is(d!.type, type);
    for (const [k, v] of Object.entries(flags)) assert.is(d![k as keyof FieldDef], v, `${name}.${k}`);
  });
}

test('syscall-only fields are not k8s_audit fields and vice versa', () => {
  assert.not.ok(resolveField('k8s_audit', 'proc.name', undefined).ok);
  assert.not.ok(resolveField('syscall', 'ka.verb', undefined).ok);
  assert.ok(resolveField('k8s_audit', 'evt.source', undefined).ok);
});

test('type classes follow the comparison groups', () => {
  const cases: Array<[FieldDef['type'], string]> = [
    ['PT_CHARBUF', 'string'],
    ['PT_FSPATH', 'string'],
    ['PT_BYTEBUF', 'bytes'],
    ['PT_BOOL', 'bool'],
    ['PT_INT64', 'signed'],
    ['PT_ERRNO', 'signed'],
    ['PT_PID', 'signed'],
    ['PT_FD', 'signed'],
    ['PT_UINT32', 'unsigned'],
    ['PT_PORT', 'unsigned'],
    ['PT_RELTIME', 'unsigned'],
    ['PT_ABSTIME', 'unsigned'],
    ['PT_FLAGS32', 'unsigned'],
    ['PT_MODE', 'unsigned'],
    ['PT_DOUBLE', 'double'],
    ['PT_IPADDR', 'ipaddr'],
    ['PT_IPNET', 'ipnet'],
  ];
  for (const [t, c] of cases) assert.is(typeClass(t), c, t);
});

// [source, name, arg, expected def name, expected arg | error message]
const RESOLVE: Array<[Source, string, string | undefined, string, string | undefined]> = [
  ['syscall', 'proc.name', undefined, 'proc.name', undefined],
  ['syscall', 'proc.aname', undefined, 'proc.aname', undefined],
  ['syscall', 'proc.aname', '2', 'proc.aname', '2'],
  ['syscall', 'evt.arg.flags', undefined, 'evt.arg', 'flags'],
  ['syscall', 'evt.arg', 'flags', 'evt.arg', 'flags'],
  ['syscall', 'evt.arg', '0', 'evt.arg', '0'],
  ['syscall', 'evt.arg.fdlimit', undefined, 'evt.arg', 'fdlimit'],
  ['syscall', 'evt.rawarg.res', undefined, 'evt.rawarg', 'res'],
  ['syscall', 'k8s.pod.label.app', undefined, 'k8s.pod.label', 'app'],
  ['syscall', 'k8s.pod.label', 'app.kubernetes.io/name', 'k8s.pod.label', 'app.kubernetes.io/name'],
  ['syscall', 'container.mount.dest', '/var/run/docker.sock', 'container.mount.dest', '/var/run/docker.sock'],
  ['syscall', 'thread.cgroup.cpuacct', undefined, 'thread.cgroup', 'cpuacct'],
  ['syscall', 'proc.env', '', 'proc.env', ''],
  ['k8s_audit', 'jevt.value', '/requestObject/spec/tls', 'jevt.value', '/requestObject/spec/tls'],
  ['k8s_audit', 'ka.uri.param', 'command', 'ka.uri.param', 'command'],
  ['k8s_audit', 'ka.req.pod.containers.image', '0', 'ka.req.pod.containers.image', '0'],
];

for (const [source, name, arg, defName, want] of RESOLVE) {
  test(`resolve ${name}${arg === undefined ? '' : `[${arg}]`}`, () => {
    const r = resolveField(source, name, arg);
    assert.ok(r.ok, r.ok ? '' : r.message);
    if (!r.ok) return;
    assert.is(r.def.name, defName);
    assert.is(r.arg, want);
  });
}

const RESOLVE_ERRORS: Array<[Source, string, string | undefined, string]> = [
  ['syscall', 'proc.nobody', undefined, 'filter_check called with nonexistent field proc.nobody'],
  ['syscall', 'proc.namex', undefined, 'filter_check called with nonexistent field proc.namex'],
  ['syscall', 'evt.arg', undefined, "filter 'evt.arg': evt.arg requires an argument but none provided"],
  ['syscall', 'evt.arg.flagsx', undefined, 'filter_check called with nonexistent field evt.arg.flagsx'],
  ['syscall', 'evt.arg.nothing', undefined, 'unknown event argument nothing'],
  ['syscall', 'evt.arg', 'nothing', 'unknown event argument nothing'],
  ['syscall', 'evt.rawarg', '0', 'evt.arg fields must be expressed explicitly'],
  ['syscall', 'evt.arg.flags', '1', 'filter_check called with nonexistent field evt.arg.flags[1]'],
  ['syscall', 'proc.name', 'x', "filter 'proc.name[x]': proc.name does not allow nor require an argument but one is provided: x"],
  ['syscall', 'proc.aname', 'x', 'x is not a valid number'],
  ['syscall', 'container.mount.dest', undefined, "filter 'container.mount.dest': container.mount.dest requires an argument but none provided"],
  ['k8s_audit', 'ka.uri.param', undefined, "filter 'ka.uri.param': ka.uri.param requires an argument but none provided"],
  ['k8s_audit', 'jevt.value', undefined, "filter 'jevt.value': jevt.value requires an argument but none provided"],
  ['k8s_audit', 'ka.verb', 'x', "filter 'ka.verb[x]': ka.verb does not allow nor require an argument but one is provided: x"],
  ['k8s_audit', 'ka.req.pod.containers.image', 'a', 'filter ka.req.pod.containers.image[a] ka.req.pod.containers.image has an invalid index argument not composed only by digits: a'],
  ['k8s_audit', 'ka.req.pod.containers.image', '01', 'filter ka.req.pod.containers.image[01] ka.req.pod.containers.image has an invalid index argument starting with 0: 01'],
  ['k8s_audit', 'ka.req.pod.containers.image', '', 'filter ka.req.pod.containers.image[] ka.req.pod.containers.image has an invalid index argument starting with 0: '],
];

for (const [source, name, arg, message] of RESOLVE_ERRORS) {
  test(`reject ${name}${arg === undefined ? '' : `[${arg}]`}`, () => {
    const r = resolveField(source, name, arg);
    assert.not.ok(r.ok);
    if (!r.ok) assert.is(r.message, message);
  });
}

test('evt.rawarg takes the raw type of the named parameter', () => {
  const types: Array<[string, string]> = [
    ['res', 'PT_ERRNO'],
    ['flags', 'PT_FLAGS32'],
    ['fd', 'PT_FD'],
    ['name', 'PT_FSPATH'],
    ['uid', 'PT_UINT32'],
  ];
  for (const [param, type] of types) {
    const r = resolveField('syscall', `evt.rawarg.${param}`, undefined);
    assert.ok(r.ok);
    if (r.ok) assert.is(r.def.type, type, param);
  }
});

// [source, text, consumed text, effective arg]
const PREFIX: Array<[Source, string, string | undefined, string | undefined]> = [
  ['syscall', 'proc.name)', 'proc.name', undefined],
  ['syscall', 'fd.name, x', 'fd.name', undefined],
  ['syscall', 'proc.aname[2] gp', 'proc.aname[2]', '2'],
  ['syscall', 'proc.aname', 'proc.aname', undefined],
  ['syscall', 'evt.arg.flags)', 'evt.arg.flags', 'flags'],
  ['syscall', 'evt.arg.flagsx', 'evt.arg.flags', 'flags'],
  ['syscall', 'proc.namex', 'proc.name', undefined],
  ['syscall', 'proc.exepath.', 'proc.exepath', undefined],
  ['syscall', 'proc.name[1]', 'proc.name', undefined],
  ['syscall', 'fd.ip', undefined, undefined],
  ['syscall', 'nothing.here', undefined, undefined],
  ['syscall', '(x)', undefined, undefined],
  ['k8s_audit', 'jevt.value[/requestObject/spec/volumes])', 'jevt.value[/requestObject/spec/volumes]', '/requestObject/spec/volumes'],
  ['k8s_audit', 'ka.uri.param[command])', 'ka.uri.param[command]', 'command'],
  ['k8s_audit', 'ka.uri.param x', 'ka.uri', undefined],
  ['k8s_audit', 'ka.req.pod.containers.image.repository,', 'ka.req.pod.containers.image.repository', undefined],
];

for (const [source, text, consumed, arg] of PREFIX) {
  test(`output prefix of ${JSON.stringify(text)}`, () => {
    const m = matchFieldPrefix(source, text);
    if (consumed === undefined) {
      assert.is(m, undefined);
      return;
    }
    assert.ok(m);
    assert.is(text.slice(0, m!.length), consumed);
    assert.is(m!.arg, arg);
  });
}

test('suggested output is the container plugin list of reference D.2', () => {
  assert.is(
    SYSCALL_SUGGESTED_OUTPUT,
    ' container_id=%container.id container_name=%container.name container_image_repository=%container.image.repository' + ' container_image_tag=%container.image.tag k8s_pod_name=%k8s.pod.name k8s_ns_name=%k8s.ns.name',
  );
  assert.is(suggestedOutput('k8s_audit'), '');
});

test('deprecated fields exist in the syscall table', () => {
  for (const name of DEPRECATED_FIELDS) assert.ok(resolveField('syscall', name, undefined).ok, name);
});

test.run();
