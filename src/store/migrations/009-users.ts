// Dashboard users: accounts with a scrypt password hash, a role per workspace, sign-in sessions, one-time password
// links, failed sign-in counters; and, on files, the model and request (or task) that generated each one.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    // Null until the user sets one through a one-time link.
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('memberships')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['user_id', 'workspace_id'])
    .execute();
  await db.schema
    .createTable('user_sessions')
    // SHA-256 of the session id the cookie carries.
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_sessions_user').on('user_sessions').column('user_id').execute();
  await db.schema
    .createTable('password_links')
    // SHA-256 of the link's token.
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    // Set: the link sets this user's password. Null: it signs up a new user (email chosen on the page) into workspace_id with role.
    .addColumn('user_id', 'text')
    .addColumn('workspace_id', 'text')
    .addColumn('role', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('sign_in_failures')
    // "email:<address>" or "ip:<address>".
    .addColumn('subject', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'bigint', (c) => c.notNull())
    .addColumn('window_started_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('files').addColumn('model', 'text').execute();
  await db.schema.alterTable('files').addColumn('request_id', 'text').execute();
  await db.schema.alterTable('files').addColumn('task_id', 'text').execute();
}
