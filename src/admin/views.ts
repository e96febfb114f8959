// What the admin service answers and accepts: the views of workspaces, keys, members, model caps and audit rows, and
// the checks of the fields a caller sends. Shared by every resource of the service (see service.ts).
import { SCOPES, isScope } from '../auth/scopes.js';
import type { PeriodSpend } from '../billing/budgets.js';
import { toMicros } from '../billing/cost.js';
import type { BudgetPeriod } from '../config/periods.js';
import { ValidationError } from '../base/errors.js';
import type { ApiKeyRow } from '../store/api-keys.js';
import type { AuditRow } from '../store/audit.js';
import type { Role } from '../store/schema.js';

/** A cap above this is almost surely a typo (the dashboard's bound too). */
export const MAX_CAP_USD = 1_000_000;
const MAX_NAME = 100;

/** Spend in the current period of a cap: USD, and when the period ends (ISO 8601 UTC; null for `total`). */
export interface PeriodFields {
  /** USD spent in the cap's current period; all time for a `total` cap or none. */
  spent_in_period: number;
  period_resets_at: string | null;
}

export interface WorkspaceView extends PeriodFields {
  id: string;
  name: string;
  /** USD, or null for none. */
  spend_cap: number | null;
  /** What the cap counts over: total, daily, weekly or monthly (billing.timeZone's calendar). */
  spend_cap_period: BudgetPeriod;
  /** USD charged so far. */
  spent: number;
  created_at: number;
}

export interface KeyView extends PeriodFields {
  id: string;
  workspace_id: string;
  name: string | null;
  /** The key's first characters, to recognise it; the key itself is shown once, at creation. */
  prefix: string;
  /** Empty: every scope. */
  scopes: string[];
  expires_at: number | null;
  revoked_at: number | null;
  spend_cap: number | null;
  spend_cap_period: BudgetPeriod;
  spent: number;
  created_at: number;
}

/** A key's or a workspace's cap on one model; `spend_cap` null once removed. */
export interface ModelCapView extends PeriodFields {
  model: string;
  spend_cap: number | null;
  spend_cap_period: BudgetPeriod;
}

export interface MemberView {
  user_id: string;
  email: string;
  role: Role;
  password_set: boolean;
}

export interface AuditView {
  id: string;
  at: string;
  actor: { kind: string; id: string };
  action: string;
  workspace_id: string | null;
  target_id: string | null;
  before: unknown;
  after: unknown;
  address: string | null;
}

export interface KeyInput {
  name?: string | null;
  scopes?: string[];
  /** Unix seconds, or null for never. */
  expires_at?: number | null;
  /** USD, or null for none. */
  spend_cap?: number | null;
  /** Absent: `total` for a new key, unchanged for an update. */
  spend_cap_period?: BudgetPeriod;
}

export interface ModelCapInput {
  model: string;
  /** USD; null removes the cap. */
  spend_cap: number | null;
  /** Absent: `total` for a new cap, unchanged for an existing one. */
  spend_cap_period?: BudgetPeriod;
}

export const usd = (micros: number | null) => (micros === null ? null : micros / 1e6);

/** The period fields of a view, from what the ledger says was spent (no spend read: nothing spent yet). */
export function periodFields(spend: PeriodSpend | undefined): PeriodFields {
  return { spent_in_period: (spend?.spentMicros ?? 0) / 1e6, period_resets_at: spend?.resetsAt == null ? null : new Date(spend.resetsAt).toISOString() };
}

/** A USD amount with at most 6 decimals, 0..MAX_CAP_USD, or null. */
export function capMicros(value: number | null, param = 'spend_cap'): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_CAP_USD || Math.abs(toMicros(value) - value * 1e6) > 1e-3) {
    throw new ValidationError(`${param} must be an amount in USD from 0 to ${MAX_CAP_USD} with at most 6 decimals, or null for none`, param);
  }
  return toMicros(value);
}

export function checkScopes(scopes: unknown): string[] {
  if (!Array.isArray(scopes) || scopes.length > SCOPES.length * 2 || !scopes.every((s) => typeof s === 'string' && isScope(s))) {
    const unknown = Array.isArray(scopes) ? scopes.filter((s) => typeof s !== 'string' || !isScope(s)).map((s) => String(s).slice(0, 40)) : [];
    throw new ValidationError(`unknown scope(s) ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`, 'scopes');
  }
  return [...new Set(scopes as string[])];
}

export function checkName(name: string | null | undefined): string | null {
  if (name === undefined || name === null) return null;
  const text = name.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (text.length > MAX_NAME) throw new ValidationError(`name may have at most ${MAX_NAME} characters`, 'name');
  return text || null;
}

export function checkExpiry(expiresAt: number | null | undefined, now: number): number | null {
  if (expiresAt === undefined || expiresAt === null) return null;
  if (!Number.isInteger(expiresAt) || expiresAt * 1000 <= now || expiresAt > 253402300799) throw new ValidationError('expires_at must be a future time in unix seconds, or null for never', 'expires_at');
  return expiresAt;
}

/** A model id as the channels name it: 1 to 128 printable ASCII characters (the spelling check; whether it is served is the caller's). */
export function checkModelId(model: unknown): string {
  if (typeof model !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(model)) throw new ValidationError('model must be a model id (1 to 128 printable characters, no spaces)', 'model');
  return model;
}

export function keyOf(row: ApiKeyRow, spentMicros = 0, spend?: PeriodSpend): KeyView {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    prefix: row.prefix,
    scopes: JSON.parse(row.scopes) as string[],
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    spend_cap: usd(row.spend_cap_micros),
    spend_cap_period: row.spend_cap_period,
    spent: spentMicros / 1e6,
    ...periodFields(spend),
    created_at: row.created_at,
  };
}

/** What the audit log keeps of a key or a workspace: everything but its hash and what it has spent. */
export const auditedKey = ({ spent: _spent, spent_in_period: _period, period_resets_at: _resets, ...key }: KeyView) => key;
export const auditedWorkspace = ({ spent: _spent, spent_in_period: _period, period_resets_at: _resets, ...ws }: WorkspaceView) => ws;

export function auditView(row: AuditRow): AuditView {
  return {
    id: row.id,
    at: new Date(Number(row.at)).toISOString(),
    actor: { kind: row.actor_kind, id: row.actor_id },
    action: row.action,
    workspace_id: row.workspace_id,
    target_id: row.target_id,
    before: row.before === null ? null : JSON.parse(row.before),
    after: row.after === null ? null : JSON.parse(row.after),
    address: row.address,
  };
}
