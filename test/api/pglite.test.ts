// The API suites on PGlite (embedded PostgreSQL in a state directory).
import { accessSuites } from './cases/access.js';
import { errorDetailSuites } from './cases/error-detail.js';
import { settingsKeysSuites } from './cases/settings-keys.js';
import { unstorableSuite } from './cases/unstorable.js';
import { finalSuite } from './cases/final.js';
import { hardeningSuite } from './cases/hardening.js';
import { ingestionSuites } from './cases/ingestion.js';
import { lifecycleSuite } from './cases/lifecycle.js';
import { sentrySdkSuite } from './cases/sentry-sdk.js';
import { pgliteStorage } from '../../support/api/storage.js';

const storage = pgliteStorage();
accessSuites(storage);
settingsKeysSuites(storage);
ingestionSuites(storage);
sentrySdkSuite(storage);
errorDetailSuites(storage);
lifecycleSuite(storage);
unstorableSuite(storage);
hardeningSuite(storage);
finalSuite(storage);
