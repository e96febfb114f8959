// The dashboard's session cookie and the signed-in user it names; the admin API reads it too (src/admin/auth.ts).
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Db } from '../store/database.js';
import { getOrInitSetting } from '../store/settings.js';
import { deleteExpiredSessions, deleteSession, findSessionUser, insertSession, type User } from '../store/users.js';

/** The session cookie; sent site-wide, so an owner's session also reaches the admin API (/admin/v1). */
export const SESSION_COOKIE = 'gw_dashboard';

/** A session lasts this long from sign-in, however active it is. */
export const SESSION_SECONDS = 12 * 3600;

declare module '@fastify/secure-session' {
  interface SessionData {
    /** The session id; the database keeps its SHA-256. */
    sid: string;
    /** The workspace the user last chose. */
    ws: string;
  }
}

/** The 32-byte cookie key, derived from a secret generated once and kept in the settings table (shared by replicas). */
export async function sessionKey(db: Db): Promise<Buffer> {
  const secret = await getOrInitSetting(db, 'dashboard.session.secret', () => randomBytes(32).toString('base64url'));
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'base64url'), Buffer.alloc(0), 'dashboard-session-cookie-v1', 32));
}

const hashSid = (sid: string) => createHash('sha256').update(sid).digest('hex');

/** Starts a session for the user in a fresh cookie (nothing of the signed-out cookie carries over). */
export async function startSession(services: { db: Db }, req: FastifyRequest, userId: string, now = Date.now()): Promise<void> {
  const sid = randomBytes(32).toString('base64url');
  const at = Math.floor(now / 1000);
  await deleteExpiredSessions(services.db, now);
  await insertSession(services.db, { id_hash: hashSid(sid), user_id: userId, created_at: at, expires_at: at + SESSION_SECONDS });
  req.session.regenerate();
  req.session.set('sid', sid);
}

export async function endSession(services: { db: Db }, req: FastifyRequest): Promise<void> {
  const sid = req.session.get('sid');
  if (typeof sid === 'string') await deleteSession(services.db, hashSid(sid));
  req.session.delete();
}

/** The signed-in user of the request, or undefined. */
export async function sessionUser(services: { db: Db }, req: FastifyRequest): Promise<User | undefined> {
  const sid = req.session.get('sid');
  if (typeof sid !== 'string' || sid.length > 64) return undefined;
  return findSessionUser(services.db, hashSid(sid));
}
