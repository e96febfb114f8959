// What Settings > API Keys shows of a workspace's keys: scopes, expiry, cap, spent, last use; and reading its forms.
import { toMicros } from '../billing/cost.js';
import { shownPeriod, spendOfSubjects } from '../billing/budgets.js';
import { BUDGET_PERIODS, parseBudgetPeriod, type BudgetCalendar, type BudgetPeriod } from '../config/periods.js';
import { formatMoney } from '../billing/spend-caps.js';
import { SCOPES, isScope } from '../auth/scopes.js';
import { ValidationError } from '../base/errors.js';
import type { Db } from '../store/database.js';
import { findApiKeyById, listApiKeys, type ApiKeyRow } from '../store/api-keys.js';

export const EXPIRY_CHOICES = [1, 7, 30, 90, 365] as const;
/** A cap above this is almost surely a typo. */
const MAX_CAP_USD = 1_000_000;

export interface KeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: string;
  expires: string;
  expired: boolean;
  cap: string;
  capValue: string;
  period: BudgetPeriod;
  /** Spent in the cap's current period ("$0.20 today"); all time for a key without a periodic cap. */
  spent: string;
  lastUsed: string;
  revoked: string;
}

const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
const minute = (seconds: number) => new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
const usd = (micros: number) => `$${formatMoney(micros)}`;

/** The forms' choices of period, and how the page names the current one. */
export const PERIOD_CHOICES = BUDGET_PERIODS;
const periodSuffix: Record<BudgetPeriod, string> = { total: '', daily: ' / day', weekly: ' / week', monthly: ' / month' };
const currentPeriod: Record<BudgetPeriod, string> = { total: '', daily: ' today', weekly: ' this week', monthly: ' this month' };

function viewOf(row: ApiKeyRow, spentMicros: number, lastUsed: number | undefined, now: number): KeyView {
  const period = shownPeriod(row);
  const scopes = JSON.parse(row.scopes) as string[];
  return {
    id: row.id,
    name: row.name ?? '',
    prefix: `${row.prefix}…`,
    scopes: scopes.length ? scopes.join(', ') : 'all',
    expires: row.expires_at === null ? 'never' : day(row.expires_at),
    expired: row.expires_at !== null && row.expires_at * 1000 <= now,
    cap: row.spend_cap_micros === null ? 'none' : `${usd(row.spend_cap_micros)}${periodSuffix[period]}`,
    capValue: row.spend_cap_micros === null ? '' : formatMoney(row.spend_cap_micros),
    period,
    spent: `${usd(spentMicros)}${currentPeriod[period]}`,
    lastUsed: lastUsed === undefined ? 'never' : minute(lastUsed),
    revoked: row.revoked_at === null ? '' : day(row.revoked_at),
  };
}

async function spentAndLastUse(db: Db, calendar: BudgetCalendar, workspaceId: string, rows: ApiKeyRow[], now: number) {
  const keyIds = rows.map((r) => r.id);
  if (!keyIds.length) return { spent: new Map<string, number>(), lastUsed: new Map<string, number>() };
  // A periodic cap shows what its current period spent (as the cap counts it), not the lifetime total.
  const spends = await spendOfSubjects(db, calendar, 'key', rows, now);
  const spent = new Map([...spends].map(([id, s]) => [id, s.spentMicros]));
  // "Last used": the last billed request (the ledger has one row per billed request; the key check itself writes nothing).
  const usedRows = await db
    .selectFrom('usage_ledger')
    .select((eb) => ['key_id', eb.fn.max<number>('created_at').as('last')])
    .where('workspace_id', '=', workspaceId)
    .where('key_id', 'in', keyIds)
    .groupBy('key_id')
    .execute();
  return { spent, lastUsed: new Map(usedRows.map((r) => [r.key_id, Number(r.last)])) };
}

export async function workspaceKeyViews(db: Db, calendar: BudgetCalendar, workspaceId: string, now = Date.now()): Promise<KeyView[]> {
  const rows = (await listApiKeys(db, workspaceId)).reverse();
  const { spent, lastUsed } = await spentAndLastUse(db, calendar, workspaceId, rows, now);
  return rows.map((r) => viewOf(r, spent.get(r.id) ?? 0, lastUsed.get(r.id), now));
}

export async function workspaceKeyView(db: Db, calendar: BudgetCalendar, workspaceId: string, id: string, now = Date.now()): Promise<KeyView | undefined> {
  const row = await workspaceKey(db, workspaceId, id);
  if (!row) return undefined;
  const { spent, lastUsed } = await spentAndLastUse(db, calendar, workspaceId, [row], now);
  return viewOf(row, spent.get(row.id) ?? 0, lastUsed.get(row.id), now);
}

/** A key of this workspace; another workspace's id reads as absent. */
export async function workspaceKey(db: Db, workspaceId: string, id: string): Promise<ApiKeyRow | undefined> {
  if (typeof id !== 'string' || id.length > 64) return undefined;
  const row = await findApiKeyById(db, id);
  return row?.workspace_id === workspaceId ? row : undefined;
}

/**
 * The cap field: one string, "" meaning no cap, otherwise US dollars with up to 6 decimals. Anything else (the field
 * repeated, `cap[]`, or absent where it is `required`) is a 400: only an explicit empty value removes a cap.
 */
export function parseCap(value: unknown, required = false): number | null {
  if (value === undefined && !required) return null;
  if (typeof value !== 'string') throw new ValidationError('send the spending cap once, as the field "cap" (empty for no cap)', 'cap');
  const text = value.trim().replace(/^\$/, '');
  if (!text) return null;
  if (!/^\d{1,7}(\.\d{1,6})?$/.test(text) || Number(text) > MAX_CAP_USD) throw new ValidationError(`the spending cap must be an amount in USD like 25.00, at most ${MAX_CAP_USD}`, 'cap');
  return toMicros(Number(text));
}

/** The cap's period from a form: one of PERIOD_CHOICES; absent means `total`. */
export function parseCapPeriod(value: unknown): BudgetPeriod {
  return parseBudgetPeriod(value, 'period');
}

export function parseScopes(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined || value === '' ? [] : [value];
  if (list.length > SCOPES.length || !list.every((s) => typeof s === 'string' && isScope(s))) throw new ValidationError(`unknown scope; known: ${SCOPES.join(', ')}`, 'scopes');
  return [...new Set(list as string[])];
}

/** Days until expiry, from the page's choices, or null for never. */
export function parseExpiryDays(value: unknown): number | null {
  if (value === undefined || value === '' || value === 'never') return null;
  const days = Number(value);
  if (!(EXPIRY_CHOICES as readonly number[]).includes(days)) throw new ValidationError(`expiry must be one of ${EXPIRY_CHOICES.join(', ')} days or never`, 'expires');
  return days;
}

export function parseKeyName(value: unknown): string | null {
  const text = typeof value === 'string' ? value.replace(/[\u0000-\u001f\u007f]/g, '').trim() : '';
  if (text.length > 100) throw new ValidationError('the name may have at most 100 characters', 'name');
  return text || null;
}
