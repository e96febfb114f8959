// The admin service: workspaces, keys, users and roles, usage and the audit log, for the REST API (/admin/v1), the CLI
// and the dashboard alike. Every change runs in one transaction together with its audit row: both land or neither.
import { issueApiKey } from '../auth/keys.js';
import { SCOPES, isScope } from '../auth/scopes.js';
import { toMicros } from '../billing/cost.js';
import { usageReport, usageTotals, type UsageRange } from '../billing/usage-report.js';
import { GatewayError, NotFoundError, ValidationError } from '../errors.js';
import { findApiKeyById, listApiKeys, type ApiKeyRow } from '../store/api-keys.js';
import { parseBudgetPeriod, type BudgetPeriod } from '../billing/periods.js';
import { writeSubjectBudget } from '../store/budgets.js';
import { appendAudit, listAudit, type Actor, type AuditRow } from '../store/audit.js';
import type { Db } from '../store/database.js';
import type { Role } from '../store/schema.js';
import { ROLES, createUser, isRole, normalizeEmail } from '../store/users.js';
import { createWorkspace, findWorkspaceById, findWorkspaceByName, type Workspace } from '../store/workspaces.js';

export type { Actor } from '../store/audit.js';

/** A cap above this is almost surely a typo (the dashboard's bound too). */
export const MAX_CAP_USD = 1_000_000;
const MAX_NAME = 100;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}$/;
const WORKSPACE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface WorkspaceView {
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

export interface KeyView {
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

/** Who may see what: an admin token sees every workspace; a dashboard owner only the ones they own. */
export type Reach = 'all' | ReadonlySet<string>;

const usd = (micros: number | null) => (micros === null ? null : micros / 1e6);

/** A USD amount with at most 6 decimals, 0..MAX_CAP_USD, or null. */
export function capMicros(value: number | null, param = 'spend_cap'): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_CAP_USD || Math.abs(toMicros(value) - value * 1e6) > 1e-3) {
    throw new ValidationError(`${param} must be an amount in USD from 0 to ${MAX_CAP_USD} with at most 6 decimals, or null for none`, param);
  }
  return toMicros(value);
}

function checkScopes(scopes: unknown): string[] {
  if (!Array.isArray(scopes) || scopes.length > SCOPES.length * 2 || !scopes.every((s) => typeof s === 'string' && isScope(s))) {
    const unknown = Array.isArray(scopes) ? scopes.filter((s) => typeof s !== 'string' || !isScope(s)).map((s) => String(s).slice(0, 40)) : [];
    throw new ValidationError(`unknown scope(s) ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`, 'scopes');
  }
  return [...new Set(scopes as string[])];
}

function checkName(name: string | null | undefined): string | null {
  if (name === undefined || name === null) return null;
  const text = name.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (text.length > MAX_NAME) throw new ValidationError(`name may have at most ${MAX_NAME} characters`, 'name');
  return text || null;
}

function checkExpiry(expiresAt: number | null | undefined, now: number): number | null {
  if (expiresAt === undefined || expiresAt === null) return null;
  if (!Number.isInteger(expiresAt) || expiresAt * 1000 <= now || expiresAt > 253402300799) throw new ValidationError('expires_at must be a future time in unix seconds, or null for never', 'expires_at');
  return expiresAt;
}

function keyOf(row: ApiKeyRow, spentMicros = 0): KeyView {
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
    created_at: row.created_at,
  };
}

/** What the audit log keeps of a key: everything but its hash and what it has spent. */
const auditedKey = ({ spent: _spent, ...key }: KeyView) => key;
const auditedWorkspace = ({ spent: _spent, ...ws }: WorkspaceView) => ws;

function auditView(row: AuditRow): AuditView {
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

export class AdminService {
  constructor(
    readonly db: Db,
    readonly actor: Actor,
    /** The workspaces this actor may see and change. */
    readonly reach: Reach = 'all',
  ) {}

  private canSee(workspaceId: string): boolean {
    return this.reach === 'all' || this.reach.has(workspaceId);
  }

  /** Changes that are not about one workspace (new workspaces, config reload) need an admin token or the CLI. */
  get global(): boolean {
    return this.reach === 'all';
  }

  private async spent(scope: 'key' | 'workspace', ids: string[]): Promise<Map<string, number>> {
    if (!ids.length) return new Map();
    const rows = await this.db.selectFrom('spend_totals').select(['subject_id', 'spent_micros']).where('scope', '=', scope).where('subject_id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.subject_id, Number(r.spent_micros)]));
  }

  private async workspaceView(row: Workspace): Promise<WorkspaceView> {
    const spent = (await this.spent('workspace', [row.id])).get(row.id) ?? 0;
    return { id: row.id, name: row.name, spend_cap: usd(row.spend_cap_micros), spend_cap_period: row.spend_cap_period, spent: spent / 1e6, created_at: row.created_at };
  }

  // ---- workspaces

  async listWorkspaces(): Promise<WorkspaceView[]> {
    const rows = await this.db.selectFrom('workspaces').selectAll().orderBy('name').execute();
    const visible = rows.filter((r) => this.canSee(r.id));
    const spent = await this.spent('workspace', visible.map((r) => r.id));
    return visible.map((r) => ({ id: r.id, name: r.name, spend_cap: usd(r.spend_cap_micros), spend_cap_period: r.spend_cap_period, spent: (spent.get(r.id) ?? 0) / 1e6, created_at: r.created_at }));
  }

  /** A workspace by id, or by name when `byName`; one out of reach reads as absent. */
  async workspace(ref: string, byName = false): Promise<Workspace> {
    const row = typeof ref === 'string' && ref.length <= 128 ? await (byName ? findWorkspaceByName(this.db, ref) : findWorkspaceById(this.db, ref)) : undefined;
    if (!row || !this.canSee(row.id)) throw new NotFoundError(byName ? `no workspace named "${String(ref).slice(0, 64)}"` : `no workspace with id "${String(ref).slice(0, 64)}"`, 'workspace_not_found');
    return row;
  }

  async getWorkspace(id: string): Promise<WorkspaceView> {
    return this.workspaceView(await this.workspace(id));
  }

  async createWorkspace(input: { name: string; spend_cap?: number | null; spend_cap_period?: BudgetPeriod }): Promise<WorkspaceView> {
    this.requireGlobal('create a workspace');
    if (typeof input.name !== 'string' || !WORKSPACE_NAME.test(input.name)) throw new ValidationError('name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit', 'name');
    const cap = capMicros(input.spend_cap ?? null);
    const period = parseBudgetPeriod(input.spend_cap_period, 'spend_cap_period');
    return this.db.transaction().execute(async (trx) => {
      if (await findWorkspaceByName(trx, input.name)) throw new ValidationError(`workspace "${input.name}" already exists`, 'name', 'workspace_exists');
      const row = await createWorkspace(trx, input.name);
      if (cap !== null) await writeSubjectBudget(trx, 'workspace', row.id, { capMicros: cap, period });
      const view: WorkspaceView = { id: row.id, name: row.name, spend_cap: usd(cap), spend_cap_period: cap === null ? 'total' : period, spent: 0, created_at: row.created_at };
      await appendAudit(trx, this.actor, { action: 'workspace.create', workspaceId: row.id, targetId: row.id, after: auditedWorkspace(view) });
      return view;
    });
  }

  async updateWorkspace(id: string, input: { spend_cap?: number | null; spend_cap_period?: BudgetPeriod }): Promise<WorkspaceView> {
    const existing = await this.workspace(id);
    if (input.spend_cap === undefined && input.spend_cap_period === undefined) return this.workspaceView(existing);
    const period = input.spend_cap_period === undefined ? undefined : parseBudgetPeriod(input.spend_cap_period, 'spend_cap_period');
    const after = await this.db.transaction().execute(async (trx) => {
      const before = await findWorkspaceById(trx, existing.id);
      if (!before) throw new NotFoundError(`no workspace with id "${id}"`, 'workspace_not_found');
      const cap = input.spend_cap === undefined ? before.spend_cap_micros : capMicros(input.spend_cap);
      await writeSubjectBudget(trx, 'workspace', before.id, { capMicros: cap, period });
      const next = { ...before, spend_cap_micros: cap, spend_cap_period: period ?? before.spend_cap_period };
      await appendAudit(trx, this.actor, {
        action: 'workspace.cap',
        workspaceId: before.id,
        targetId: before.id,
        before: { spend_cap: usd(before.spend_cap_micros), spend_cap_period: before.spend_cap_period },
        after: { spend_cap: usd(cap), spend_cap_period: next.spend_cap_period },
      });
      return next;
    });
    // Read after the commit: on SQLite a query outside the transaction waits for it to end.
    return this.workspaceView(after);
  }

  // ---- keys

  async listKeys(workspaceId: string): Promise<KeyView[]> {
    const workspace = await this.workspace(workspaceId);
    const rows = await listApiKeys(this.db, workspace.id);
    const spent = await this.spent('key', rows.map((r) => r.id));
    return rows.map((r) => keyOf(r, spent.get(r.id)));
  }

  private async keyRow(id: string): Promise<ApiKeyRow> {
    const row = typeof id === 'string' && id.length <= 64 ? await findApiKeyById(this.db, id) : undefined;
    if (!row || !this.canSee(row.workspace_id)) throw new NotFoundError(`no key with id "${String(id).slice(0, 64)}"`, 'key_not_found');
    return row;
  }

  async getKey(id: string): Promise<KeyView> {
    const row = await this.keyRow(id);
    return keyOf(row, (await this.spent('key', [row.id])).get(row.id));
  }

  /** Creates a key; the answer holds the key itself, which is never shown again. */
  async createKey(workspaceId: string, input: KeyInput, now = Date.now()): Promise<KeyView & { key: string }> {
    const workspace = await this.workspace(workspaceId);
    const scopes = checkScopes(input.scopes ?? []);
    const name = checkName(input.name);
    const expiresAt = checkExpiry(input.expires_at, now);
    const cap = capMicros(input.spend_cap ?? null);
    const period = parseBudgetPeriod(input.spend_cap_period, 'spend_cap_period');
    return this.db.transaction().execute(async (trx) => {
      const issued = await issueApiKey(trx, workspace, { scopes, name, expiresAt, spendCapMicros: cap, spendCapPeriod: period, now });
      const row = await findApiKeyById(trx, issued.id);
      const view = keyOf(row!);
      await appendAudit(trx, this.actor, { action: 'key.create', workspaceId: workspace.id, targetId: issued.id, after: auditedKey(view) }, now);
      return { ...view, key: issued.key };
    });
  }

  /** Changes a key's cap, scopes, expiry or name; fields left out stay as they are. */
  async updateKey(id: string, input: KeyInput, now = Date.now()): Promise<KeyView> {
    await this.keyRow(id);
    const set: Partial<Pick<ApiKeyRow, 'name' | 'scopes' | 'expires_at' | 'spend_cap_micros' | 'spend_cap_period'>> = {};
    if (input.name !== undefined) set.name = checkName(input.name);
    if (input.scopes !== undefined) set.scopes = JSON.stringify(checkScopes(input.scopes));
    if (input.expires_at !== undefined) set.expires_at = checkExpiry(input.expires_at, now);
    if (input.spend_cap !== undefined) set.spend_cap_micros = capMicros(input.spend_cap);
    if (input.spend_cap_period !== undefined) set.spend_cap_period = parseBudgetPeriod(input.spend_cap_period, 'spend_cap_period');
    const view = await this.db.transaction().execute(async (trx) => {
      const before = await findApiKeyById(trx, id);
      if (!before) throw new NotFoundError(`no key with id "${id}"`, 'key_not_found');
      if (!Object.keys(set).length) return keyOf(before);
      await trx.updateTable('api_keys').set(set).where('id', '=', id).execute();
      // A changed cap or period starts its period's spend again from the ledger.
      if (set.spend_cap_micros !== undefined || set.spend_cap_period !== undefined) await trx.deleteFrom('spend_periods').where('scope', '=', 'key').where('subject_id', '=', id).where('model', '=', '').execute();
      const after = { ...before, ...set };
      const capOnly = Object.keys(set).every((k) => k === 'spend_cap_micros' || k === 'spend_cap_period');
      const action = capOnly ? 'key.cap' : Object.keys(set).length === 1 ? { scopes: 'key.scopes', expires_at: 'key.expiry', name: 'key.rename' }[Object.keys(set)[0]]! : 'key.update';
      await appendAudit(trx, this.actor, { action, workspaceId: before.workspace_id, targetId: id, before: auditedKey(keyOf(before)), after: auditedKey(keyOf(after)) }, now);
      return keyOf(after);
    });
    return { ...view, spent: ((await this.spent('key', [id])).get(id) ?? 0) / 1e6 };
  }

  /** Revokes a key; revoking one already revoked changes nothing and writes no row. */
  async revokeKey(id: string, now = Date.now()): Promise<KeyView> {
    await this.keyRow(id);
    const view = await this.db.transaction().execute(async (trx) => {
      const before = await findApiKeyById(trx, id);
      if (!before) throw new NotFoundError(`no key with id "${id}"`, 'key_not_found');
      if (before.revoked_at !== null) return keyOf(before);
      const after = { ...before, revoked_at: Math.floor(now / 1000) };
      await trx.updateTable('api_keys').set({ revoked_at: after.revoked_at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
      await appendAudit(trx, this.actor, { action: 'key.revoke', workspaceId: before.workspace_id, targetId: id, before: auditedKey(keyOf(before)), after: auditedKey(keyOf(after)) }, now);
      return keyOf(after);
    });
    return { ...view, spent: ((await this.spent('key', [id])).get(id) ?? 0) / 1e6 };
  }

  // ---- users and roles

  async listMembers(workspaceId: string): Promise<MemberView[]> {
    const workspace = await this.workspace(workspaceId);
    const rows = await this.db
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select(['users.id as user_id', 'users.email as email', 'memberships.role as role', 'users.password_hash as password_hash'])
      .where('memberships.workspace_id', '=', workspace.id)
      .orderBy('users.email')
      .execute();
    return rows.map((r) => ({ user_id: r.user_id, email: r.email, role: r.role, password_set: r.password_hash !== null }));
  }

  /**
   * Gives a user (by email; created when new) a role in a workspace. `created` says whether the account is new, so a
   * caller can hand out a password link.
   */
  async setRole(workspaceId: string, input: { email: string; role: string }, now = Date.now()): Promise<MemberView & { created: boolean }> {
    const workspace = await this.workspace(workspaceId);
    const email = typeof input.email === 'string' ? normalizeEmail(input.email) : '';
    if (!EMAIL.test(email)) throw new ValidationError('email must be an email address', 'email');
    if (!isRole(input.role)) throw new ValidationError(`role must be one of ${ROLES.join(', ')}`, 'role');
    const role = input.role;
    return this.db.transaction().execute(async (trx) => {
      let user = await trx.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
      const created = !user;
      user ??= await createUser(trx, email, now);
      const before = await trx.selectFrom('memberships').select('role').where('user_id', '=', user.id).where('workspace_id', '=', workspace.id).executeTakeFirst();
      if (before?.role === role) return { user_id: user.id, email, role, password_set: user.password_hash !== null, created };
      if (before?.role === 'owner') await this.keepAnOwner(trx, workspace.id, 'email');
      if (before) await trx.updateTable('memberships').set({ role }).where('user_id', '=', user.id).where('workspace_id', '=', workspace.id).execute();
      else await trx.insertInto('memberships').values({ user_id: user.id, workspace_id: workspace.id, role, created_at: Math.floor(now / 1000) }).execute();
      await appendAudit(trx, this.actor, {
        action: created ? 'user.create' : 'user.role',
        workspaceId: workspace.id,
        targetId: user.id,
        before: before ? { email, role: before.role } : null,
        after: { email, role },
      }, now);
      return { user_id: user.id, email, role, password_set: user.password_hash !== null, created };
    });
  }

  /** Takes a user out of a workspace (the account stays, with its other workspaces); the last owner stays. */
  async removeMember(workspaceId: string, userId: string, now = Date.now()): Promise<void> {
    const workspace = await this.workspace(workspaceId);
    await this.db.transaction().execute(async (trx) => {
      const member = await trx
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select(['users.email as email', 'memberships.role as role'])
        .where('memberships.user_id', '=', String(userId).slice(0, 64))
        .where('memberships.workspace_id', '=', workspace.id)
        .executeTakeFirst();
      if (!member) throw new NotFoundError(`no member with id "${String(userId).slice(0, 64)}" in this workspace`, 'member_not_found');
      if (member.role === 'owner') await this.keepAnOwner(trx, workspace.id, 'user_id');
      await trx.deleteFrom('memberships').where('user_id', '=', userId).where('workspace_id', '=', workspace.id).execute();
      // Sessions read memberships on every request, so the removal applies at the user's next click.
      await appendAudit(trx, this.actor, { action: 'user.remove', workspaceId: workspace.id, targetId: userId, before: { email: member.email, role: member.role }, after: null }, now);
    });
  }

  /** Refuses to take away the workspace's last owner (called before an owner is demoted or removed). */
  private async keepAnOwner(trx: Db, workspaceId: string, param: string): Promise<void> {
    const owners = await trx.selectFrom('memberships').select('user_id').where('workspace_id', '=', workspaceId).where('role', '=', 'owner').execute();
    if (owners.length <= 1) throw new ValidationError('a workspace keeps at least one owner: make another member owner first', param, 'last_owner');
  }

  // ---- usage and audit

  async usage(workspaceId: string, range: UsageRange) {
    const workspace = await this.workspace(workspaceId);
    const data = await usageReport(this.db, workspace.id, range);
    return { workspace_id: workspace.id, data, totals: usageTotals(data) };
  }

  async audit(query: { workspace_id?: string; before?: string; limit?: number }): Promise<{ data: AuditView[]; has_more: boolean }> {
    const limit = query.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new ValidationError('limit must be an integer from 1 to 500', 'limit');
    if (query.before !== undefined && !/^aud_[0-9a-f]{28}$/.test(query.before)) throw new ValidationError('before must be an audit row id', 'before');
    let workspaceIds: string[] | undefined;
    if (query.workspace_id !== undefined) workspaceIds = [(await this.workspace(query.workspace_id)).id];
    else if (this.reach !== 'all') workspaceIds = [...this.reach];
    const rows = await listAudit(this.db, { workspaceIds, before: query.before, limit: limit + 1 });
    return { data: rows.slice(0, limit).map(auditView), has_more: rows.length > limit };
  }

  /** Records a change made elsewhere (a config reload, a file deleted from the dashboard) in its own row. */
  async record(action: string, workspaceId: string | null, targetId: string | null, before?: unknown, after?: unknown): Promise<void> {
    await appendAudit(this.db, this.actor, { action, workspaceId, targetId, before, after });
  }

  private requireGlobal(what: string): void {
    if (!this.global) throw new ForbiddenError(`only an admin token may ${what}`);
  }
}

export class ForbiddenError extends GatewayError {
  constructor(message: string) {
    super('forbidden', 403, 'permission_error', message);
  }
}
