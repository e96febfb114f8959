// Who uses the admin service and what it reaches: the actor recorded in the audit log, the workspaces it may see, and
// the database, budget calendar and clock every resource (keys-service.ts, workspaces-service.ts, ...) reads through.
import { spendOfSubjects, type CappedSubject, type SubjectSpend } from '../billing/budgets.js';
import { BudgetCalendar } from '../config/periods.js';
import { GatewayError, NotFoundError } from '../base/errors.js';
import { findApiKeyById, type ApiKeyRow } from '../store/api-keys.js';
import type { Actor } from '../store/audit.js';
import type { Db } from '../store/database.js';
import { findWorkspaceById, findWorkspaceByName, type Workspace } from '../store/workspaces.js';

/** Who may see what: an admin token sees every workspace; a dashboard owner only the ones they own. */
export type Reach = 'all' | ReadonlySet<string>;

/** What the service reads and writes through. */
export interface AdminStore {
  db: Db;
  /** Where budget periods begin and end (billing.timeZone): the views show spend in the current period. */
  calendar?: BudgetCalendar;
  /** The clock (Unix milliseconds) budget periods are read at; tests move it. */
  now?: () => number;
  /** The id of the model the gateway serves under this id or alias, else undefined; absent (the CLI, which loads no channels): not checked. */
  servedModelId?: (model: string) => string | undefined;
  /** The ids of the MCP servers the gateway serves now; absent (the CLI): not checked. */
  mcpServers?: () => ReadonlySet<string>;
  /** The guardrail ids the config offers to workspaces and keys now; absent (the CLI): not checked. */
  offeredGuardrails?: () => ReadonlySet<string>;
  /** The endpoint families a workspace's or key's cache settings may name (the catalogue's pipeline operations). */
  cacheFamilies?: () => ReadonlySet<string>;
}

export class ForbiddenError extends GatewayError {
  constructor(message: string) {
    super('forbidden', 403, 'permission_error', message);
  }
}

export class AdminScope {
  readonly db: Db;
  readonly calendar: BudgetCalendar;
  readonly servedModelId: ((model: string) => string | undefined) | undefined;
  readonly mcpServers: (() => ReadonlySet<string>) | undefined;
  readonly offeredGuardrails: (() => ReadonlySet<string>) | undefined;
  readonly cacheFamilies: (() => ReadonlySet<string>) | undefined;
  private readonly clock: () => number;

  constructor(
    store: AdminStore,
    readonly actor: Actor,
    /** The workspaces this actor may see and change. */
    readonly reach: Reach = 'all',
  ) {
    this.db = store.db;
    this.calendar = store.calendar ?? new BudgetCalendar();
    this.clock = store.now ?? Date.now;
    this.servedModelId = store.servedModelId;
    this.mcpServers = store.mcpServers;
    this.offeredGuardrails = store.offeredGuardrails;
    this.cacheFamilies = store.cacheFamilies;
  }

  now(): number {
    return this.clock();
  }

  canSee(workspaceId: string): boolean {
    return this.reach === 'all' || this.reach.has(workspaceId);
  }

  /** Changes that are not about one workspace (new workspaces, config reload) need an admin token or the CLI. */
  get global(): boolean {
    return this.reach === 'all';
  }

  requireGlobal(what: string): void {
    if (!this.global) throw new ForbiddenError(`only an admin token may ${what}`);
  }

  /** A workspace by id, or by name when `byName`; one out of reach reads as absent. */
  async workspace(ref: string, byName = false): Promise<Workspace> {
    const row = typeof ref === 'string' && ref.length <= 128 ? await (byName ? findWorkspaceByName(this.db, ref) : findWorkspaceById(this.db, ref)) : undefined;
    if (!row || !this.canSee(row.id)) throw new NotFoundError(byName ? `no workspace named "${String(ref).slice(0, 64)}"` : `no workspace with id "${String(ref).slice(0, 64)}"`, 'workspace_not_found');
    return row;
  }

  /** A key in reach; another workspace's reads as absent. */
  async keyRow(id: string): Promise<ApiKeyRow> {
    const row = typeof id === 'string' && id.length <= 64 ? await findApiKeyById(this.db, id) : undefined;
    if (!row || !this.canSee(row.workspace_id)) throw new NotFoundError(`no key with id "${String(id).slice(0, 64)}"`, 'key_not_found');
    return row;
  }

  /** What each key or workspace has spent, all time and in its cap's current period (read after any transaction). */
  spends(scope: 'key' | 'workspace', subjects: readonly CappedSubject[]): Promise<Map<string, SubjectSpend>> {
    return spendOfSubjects(this.db, this.calendar, scope, subjects, this.now());
  }
}
