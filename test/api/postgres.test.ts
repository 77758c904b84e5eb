// The API suites on a real PostgreSQL server: a throwaway cluster on a free loopback port,
// started here and stopped by the last suite. Without the binaries every suite is skipped,
// loudly (CI counts a skip as a failure; scripts/setup.sh installs Debian's postgresql).
import { test } from 'uvu';
import { accessSuites } from './cases/access.js';
import { errorDetailSuites } from './cases/error-detail.js';
import { finalSuite } from './cases/final.js';
import { hardeningSuite } from './cases/hardening.js';
import { ingestionSuites } from './cases/ingestion.js';
import { lifecycleSuite } from './cases/lifecycle.js';
import { sentrySdkSuite } from './cases/sentry-sdk.js';
import { settingsKeysSuites } from './cases/settings-keys.js';
import { unstorableSuite } from './cases/unstorable.js';
import { postgresStorage } from '../../support/api/storage.js';

const storage = postgresStorage();
if ('unavailable' in storage) {
  process.stderr.write(`\n*** SKIPPING the API tests on PostgreSQL: ${storage.unavailable} ***\n\n`);
  test.skip('API suites on PostgreSQL (binaries missing)', () => {});
  test.run();
} else {
  accessSuites(storage);
  settingsKeysSuites(storage);
  ingestionSuites(storage);
  sentrySdkSuite(storage);
  errorDetailSuites(storage);
  lifecycleSuite(storage);
  unstorableSuite(storage);
  hardeningSuite(storage);
  finalSuite(storage);
}
