// Issues API keys: random, shown once, stored only as SHA-256 with a display prefix.
import { hash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../store/database.js';
import { insertApiKey } from '../store/api-keys.js';
import type { Workspace } from '../store/workspaces.js';
import { ValidationError } from '../base/errors.js';
import { isScope, SCOPES } from './scopes.js';
import type { BudgetPeriod } from '../config/periods.js';

export const KEY_PREFIX = 'sk-gw-';

/** SHA-256 in hex; the one-shot `crypto.hash` (Node >= 20.12) makes no Hash object (a quarter of the time, every request). */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export interface IssueKeyOptions {
  scopes?: string[];
  expiresAt?: number | null;
  spendCapMicros?: number | null;
  /** The period the cap counts over (default `total`). */
  spendCapPeriod?: BudgetPeriod;
  name?: string | null;
  now?: number;
}

export interface IssuedKey {
  id: string;
  key: string;
  workspace: string;
  scopes: string[];
  expires_at: number | null;
}

export async function issueApiKey(db: Db, workspace: Workspace, options: IssueKeyOptions = {}): Promise<IssuedKey> {
  const scopes = options.scopes ?? [];
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw new ValidationError(`unknown scope(s) ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`, 'scopes');
  const key = `${KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
  const id = `key_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  const now = options.now ?? Date.now();
  await insertApiKey(db, {
    id,
    workspace_id: workspace.id,
    name: options.name ?? null,
    prefix: key.slice(0, KEY_PREFIX.length + 6),
    hash: hashApiKey(key),
    scopes: JSON.stringify(scopes),
    expires_at: options.expiresAt ?? null,
    revoked_at: null,
    spend_cap_micros: options.spendCapMicros ?? null,
    spend_cap_period: options.spendCapPeriod ?? 'total',
    created_at: Math.floor(now / 1000),
  });
  return { id, key, workspace: workspace.name, scopes, expires_at: options.expiresAt ?? null };
}

/** Parses `30d`, `12h`, `45m`, `90s` into seconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)\s*([smhd])$/.exec(text.trim());
  if (!match) throw new ValidationError(`invalid duration "${text}" (use e.g. 30d, 12h, 45m)`, 'expires-in');
  const unit = { s: 1, m: 60, h: 3600, d: 86400 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}
