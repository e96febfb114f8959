// Dashboard users, their role per workspace, their sign-in sessions and one-time password links.
import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';
import type { PasswordLinksTable, Role, UsersTable } from './schema.js';

export type User = UsersTable;
export type PasswordLink = PasswordLinksTable;
export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

const seconds = (now: number) => Math.floor(now / 1000);

/** Emails compare case-insensitively: stored trimmed and lower-cased. */
/** Lower case, trimmed, control characters dropped (no address has one, and PostgreSQL text takes no NUL). */
export function normalizeEmail(email: string): string {
  return email.replace(/[\u0000-\u001f\u007f]/g, '').trim().toLowerCase();
}

export async function createUser(db: Db, email: string, now = Date.now()): Promise<User> {
  const row: User = { id: `user_${randomUUID().replace(/-/g, '')}`, email: normalizeEmail(email), password_hash: null, created_at: seconds(now) };
  await db.insertInto('users').values(row).execute();
  return row;
}

export async function findUserByEmail(db: Db, email: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
}

export async function findUserById(db: Db, id: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Sets the user's password, by whatever route: every one-time link of theirs still outstanding ends with it. */
export async function setPasswordHash(db: Db, userId: string, hash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).execute();
  await db.deleteFrom('password_links').where('user_id', '=', userId).execute();
}

/** Adds the user to the workspace, or changes the role they have there. */
export async function setMembership(db: Db, userId: string, workspaceId: string, role: Role, now = Date.now()): Promise<void> {
  await db
    .insertInto('memberships')
    .values({ user_id: userId, workspace_id: workspaceId, role, created_at: seconds(now) })
    .onConflict((oc) => oc.columns(['user_id', 'workspace_id']).doUpdateSet({ role }))
    .execute();
}

export interface WorkspaceMembership {
  workspaceId: string;
  workspaceName: string;
  role: Role;
}

/** The workspaces a user belongs to, by name. */
export async function membershipsOf(db: Db, userId: string): Promise<WorkspaceMembership[]> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
    .select(['memberships.workspace_id as workspaceId', 'workspaces.name as workspaceName', 'memberships.role as role'])
    .where('memberships.user_id', '=', userId)
    .orderBy('workspaces.name')
    .execute();
  return rows;
}

export async function insertSession(db: Db, row: { id_hash: string; user_id: string; created_at: number; expires_at: number }): Promise<void> {
  await db.insertInto('user_sessions').values(row).execute();
}

/** The user of a live session, or undefined when it is unknown or has expired. */
export async function findSessionUser(db: Db, idHash: string, now = Date.now()): Promise<User | undefined> {
  return db
    .selectFrom('user_sessions')
    .innerJoin('users', 'users.id', 'user_sessions.user_id')
    .selectAll('users')
    .where('user_sessions.id_hash', '=', idHash)
    .where('user_sessions.expires_at', '>', seconds(now))
    .executeTakeFirst();
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.deleteFrom('user_sessions').where('id_hash', '=', idHash).execute();
}

/** Signs a user out everywhere (after a password change). */
export async function deleteSessionsOf(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('user_sessions').where('user_id', '=', userId).execute();
}

export async function deleteExpiredSessions(db: Db, now = Date.now()): Promise<void> {
  await db.deleteFrom('user_sessions').where('expires_at', '<=', seconds(now)).execute();
}

/** Stores a link; a link for a user ends every other link of theirs (only the newest one works). */
export async function insertPasswordLink(db: Db, row: PasswordLink): Promise<void> {
  await db.deleteFrom('password_links').where('expires_at', '<=', row.created_at).execute();
  if (row.user_id) await db.deleteFrom('password_links').where('user_id', '=', row.user_id).execute();
  await db.insertInto('password_links').values(row).execute();
}

export async function findPasswordLink(db: Db, tokenHash: string, now = Date.now()): Promise<PasswordLink | undefined> {
  return db.selectFrom('password_links').selectAll().where('token_hash', '=', tokenHash).where('expires_at', '>', seconds(now)).executeTakeFirst();
}

/** Removes the link; true only for the one caller that removed it, so a link is used once even when two race. */
export async function takePasswordLink(db: Db, tokenHash: string): Promise<boolean> {
  const result = await db.deleteFrom('password_links').where('token_hash', '=', tokenHash).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
