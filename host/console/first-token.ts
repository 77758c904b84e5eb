// Sign-in without a default password: on a database that has no user yet (a first start), the
// console creates the admin user `console` with a personal access token (scope api) and returns
// the token, which the caller prints once on stderr; only its digest is stored. Later starts find
// a user and create nothing; `rae admin` manages users and tokens from then on. Consumes the open
// database; produces the token or undefined.
import { addToken, generateToken, type Db } from '../api/db/index.js';

/** The user a first start creates. */
const FIRST_USER = 'console';

/** A new admin token when the database has no user at all, else undefined (also when another process created one first). */
export async function firstStartToken(db: Db): Promise<string | undefined> {
  // one statement: of two processes starting on one empty PostgreSQL, the user name's uniqueness lets one win
  let rows: Array<{ id: number }>;
  try {
    rows = await db.query<{ id: number }>('INSERT INTO users (username, admin) SELECT $1, true WHERE NOT EXISTS (SELECT 1 FROM users) RETURNING id', [FIRST_USER]);
  } catch (err) {
    // a concurrent first start made the user (unique name): that one prints the token
    if ((err as { code?: string }).code === '23505') return undefined;
    throw err;
  }
  const user = rows[0];
  if (!user) return undefined;
  const token = generateToken();
  await addToken(db, user.id, token, { name: 'console first start', scope: 'api' });
  return token;
}
