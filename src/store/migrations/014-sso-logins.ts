// Single sign-on in progress: one row per started sign-in, keyed by the SHA-256 of its OAuth state, holding the PKCE
// verifier and nonce, bound to the browser that started it, used once and gone after ten minutes.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sso_logins')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    // SHA-256 of the random value in the starting browser's gw_sso cookie.
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    // Unix seconds.
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}
