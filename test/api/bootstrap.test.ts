// The bootstrap file's validation: accepted shape and located problems.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseBootstrap } from '../../host/api/bootstrap.js';

test('a full file becomes a plan with defaults', () => {
  const r = parseBootstrap(
    'b.yaml',
    `
users:
  - username: alice
    admin: true
    tokens:
      - token: glpat-aaaaaaaaaaaaaaaaaaaa
        expires_at: 2030-01-01
        scope: read_api
projects:
  - path: group/sub/app
    visibility: public
    members: { alice: owner }
`,
  );
  assert.equal(r, {
    ok: true,
    plan: {
      users: [{ username: 'alice', admin: true, tokens: [{ name: 'bootstrap', token: 'glpat-aaaaaaaaaaaaaaaaaaaa', scope: 'read_api', expiresAt: '2030-01-01' }] }],
      projects: [{ path: 'group/sub/app', visibility: 'public', members: [{ username: 'alice', role: 'owner' }] }],
    },
  });
  assert.equal(parseBootstrap('empty.yaml', ''), { ok: true, plan: { users: [], projects: [] } });
});

test('problems name the file and the key path', () => {
  const r = parseBootstrap(
    'b.yaml',
    `
user: []
users:
  - username: "bad name"
    admin: yes please
    tokens: { token: x }
  - 42
projects:
  - path: ok/path
    visibility: secret
    members: [alice]
`,
  );
  assert.equal(r, {
    ok: false,
    problems: [
      'b.yaml: user: unknown key (expected one of users, projects)',
      'b.yaml: users[0].username: expected letters, digits, _ . - only',
      'b.yaml: users[0].admin: expected true or false',
      'b.yaml: users[0].tokens: expected a list',
      'b.yaml: users[1]: expected a mapping',
      'b.yaml: projects[0].visibility: expected private or public',
      'b.yaml: projects[0].members: expected a mapping of user name to role',
    ],
  });
  const syntax = parseBootstrap('c.yaml', 'users: [\n');
  assert.is(syntax.ok, false);
  assert.match((syntax as { problems: string[] }).problems.join('\n'), /^c\.yaml: .+/);
  assert.is((syntax as { problems: string[] }).problems.length, 1);
});

test.run();
