// Entity derivations: project_name from api_url (titleized), external URL, DSN.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { clientKeyEntity, dsn, projectNameFromApiUrl, settingEntity, titleize } from '../../host/api/entities.js';

test('titleize as Rails does for slugs', () => {
  const table: Array<[string, string]> = [
    ['my-proj', 'My Proj'],
    ['sentry_project_1', 'Sentry Project 1'],
    ['backendApi', 'Backend Api'],
    ['owner_id', 'Owner'],
    ['x', 'X'],
  ];
  for (const [input, want] of table) assert.is(titleize(input), want, input);
});

test("project_name comes from api_url's /api/0/projects/<org>/<project>/ path only", () => {
  const table: Array<[string | null, string | null]> = [
    ['https://sentry.io/api/0/projects/myorg/my-proj/', 'My Proj'],
    ['https://sentry.example.com/api/0/projects//org//web_app', 'Web App'],
    ['https://sentry.io/api/0/projects/', null],
    ['https://sentry.io/org/proj/', null],
    ['not a url', null],
    [null, null],
  ];
  for (const [input, want] of table) assert.is(projectNameFromApiUrl(input), want, String(input));
});

test('setting entity: key order, stored name wins, external URL drops api/0/projects/', () => {
  const e = settingEntity({ project_id: 1, enabled: true, integrated: false, api_url: 'https://sentry.io/api/0/projects/org/proj/', project_name: 'Stored' });
  assert.equal(Object.keys(e), ['active', 'project_name', 'errtrack_external_url', 'api_url', 'integrated']);
  assert.equal(e, { active: true, project_name: 'Stored', errtrack_external_url: 'https://sentry.io/org/proj/', api_url: 'https://sentry.io/api/0/projects/org/proj/', integrated: false });
});

test('DSN: scheme, key, configured host, numeric project id', () => {
  const base = { scheme: 'https', host: 'errors.example.com' };
  assert.is(dsn(base, 'glet_0123456789abcdef0123456789abcdef', 42), 'https://glet_0123456789abcdef0123456789abcdef@errors.example.com/errortracking/api/v1/projects/42');
  const k = clientKeyEntity({ scheme: 'http', host: 'localhost:8080' }, { id: 7, project_id: 3, active: true, public_key: 'glet_x' });
  assert.equal(k, { id: 7, active: true, public_key: 'glet_x', errtrack_dsn: 'http://glet_x@localhost:8080/errortracking/api/v1/projects/3' });
});

test.run();
