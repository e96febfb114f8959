// One-time links that set a password: the first start's owner sign-up, and `npm run admin -- user create|set-password`.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../store/database.js';
import type { Role } from '../store/schema.js';
import { findPasswordLink, insertPasswordLink, type PasswordLink } from '../store/users.js';

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
