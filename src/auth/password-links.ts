// One-time links that set a password: the first start's owner sign-up, and `npm run admin -- user create|set-password`.
import { createHash, randomBytes } from 'node:crypto';
import { appendAudit } from '../store/audit.js';
import type { Db } from '../store/database.js';
import type { Role } from '../store/schema.js';
import { createUser, deleteSessionsOf, findPasswordLink, insertPasswordLink, setMembership, setPasswordHash, takePasswordLink, type PasswordLink } from '../store/users.js';

export const OWNER_LINK_SECONDS = 7 * 86_400;
export const USER_LINK_SECONDS = 86_400;

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export type LinkTarget = { userId: string } | { workspaceId: string; role: Role };

/** Stores a new link and returns its token (shown once; only its hash is kept). */
export async function createPasswordLink(db: Db, target: LinkTarget, lifetimeSeconds: number, now = Date.now()): Promise<string> {
  const token = randomBytes(24).toString('base64url');
  const created = Math.floor(now / 1000);
  await insertPasswordLink(db, {
    token_hash: hashToken(token),
    user_id: 'userId' in target ? target.userId : null,
    workspace_id: 'workspaceId' in target ? target.workspaceId : null,
    role: 'role' in target ? target.role : null,
    created_at: created,
    expires_at: created + lifetimeSeconds,
  });
  return token;
}

/** The live link a token names; a malformed token reads as absent without a query. */
export async function passwordLinkFor(db: Db, token: unknown, now = Date.now()): Promise<PasswordLink | undefined> {
  if (typeof token !== 'string' || !/^[A-Za-z0-9_-]{32}$/.test(token)) return undefined;
  return findPasswordLink(db, hashToken(token), now);
}

/** Where a link's page lives: the configured public URL, or the address the gateway listens on. */
export function passwordLinkUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/dashboard/setup?token=${token}`;
}

/**
 * Spends a link and sets the password it is for, in one transaction with its audit row: a sign-up link creates the
 * account and its membership (`user.sign_up`), a user's link sets their password (`user.password`); the user's other
 * sessions end. Undefined when the link was spent already: taking it is the commit point, so of two submissions
 * racing one wins and the other finds no link.
 */
export async function usePasswordLink(db: Db, link: PasswordLink, token: string, input: { email: string; passwordHash: string; address: string }): Promise<string | undefined> {
  return db.transaction().execute(async (trx) => {
    if (!(await takePasswordLink(trx, hashToken(token)))) return undefined;
    const signUp = !link.user_id;
    const userId = link.user_id ?? (await createUser(trx, input.email)).id;
    if (signUp) await setMembership(trx, userId, link.workspace_id!, link.role!);
    await setPasswordHash(trx, userId, input.passwordHash);
    await deleteSessionsOf(trx, userId);
    const actor = { kind: 'user' as const, id: userId, address: input.address };
    if (signUp) await appendAudit(trx, actor, { action: 'user.sign_up', workspaceId: link.workspace_id, targetId: userId, before: null, after: { email: input.email, role: link.role } });
    else await appendAudit(trx, actor, { action: 'user.password', workspaceId: null, targetId: userId, before: null, after: { set: 'through a one-time link' } });
    return userId;
  });
}
