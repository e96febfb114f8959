// Workspaces in the admin service: list, show, create (admin token or CLI only) and change the cap, each change in one
// transaction with its audit row.
import { parseBudgetPeriod, type BudgetPeriod } from '../config/periods.js';
import { NotFoundError, ValidationError } from '../base/errors.js';
import { appendAudit } from '../store/audit.js';
import { writeSubjectBudget } from '../store/budgets.js';
import { createWorkspace as insertWorkspace, findWorkspaceById, findWorkspaceByName, type Workspace } from '../store/workspaces.js';
import type { AdminScope } from './scope.js';
import { auditedWorkspace, capMicros, periodFields, usd, type WorkspaceView } from './views.js';

const WORKSPACE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface WorkspaceInput {
  spend_cap?: number | null;
  spend_cap_period?: BudgetPeriod;
}

async function views(admin: AdminScope, rows: Workspace[]): Promise<WorkspaceView[]> {
  const spends = await admin.spends('workspace', rows);
  return rows.map((r) => {
    const spend = spends.get(r.id);
    return { id: r.id, name: r.name, spend_cap: usd(r.spend_cap_micros), spend_cap_period: r.spend_cap_period, spent: (spend?.lifetimeMicros ?? 0) / 1e6, ...periodFields(spend), created_at: r.created_at };
  });
}

export async function listWorkspaces(admin: AdminScope): Promise<WorkspaceView[]> {
  const rows = await admin.db.selectFrom('workspaces').selectAll().orderBy('name').execute();
  return views(admin, rows.filter((r) => admin.canSee(r.id)));
}

export async function getWorkspace(admin: AdminScope, id: string): Promise<WorkspaceView> {
  return (await views(admin, [await admin.workspace(id)]))[0];
}

export async function createWorkspace(admin: AdminScope, input: { name: string } & WorkspaceInput): Promise<WorkspaceView> {
  admin.requireGlobal('create a workspace');
  if (typeof input.name !== 'string' || !WORKSPACE_NAME.test(input.name)) throw new ValidationError('name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit', 'name');
  const cap = capMicros(input.spend_cap ?? null);
  const period = parseBudgetPeriod(input.spend_cap_period, 'spend_cap_period');
  const row = await admin.db.transaction().execute(async (trx) => {
    if (await findWorkspaceByName(trx, input.name)) throw new ValidationError(`workspace "${input.name}" already exists`, 'name', 'workspace_exists');
    const created = await insertWorkspace(trx, input.name);
    if (cap !== null) await writeSubjectBudget(trx, 'workspace', created.id, { capMicros: cap, period });
    const stored = { ...created, spend_cap_micros: cap, spend_cap_period: cap === null ? 'total' : period } as Workspace;
    const view: WorkspaceView = { id: stored.id, name: stored.name, spend_cap: usd(cap), spend_cap_period: stored.spend_cap_period, spent: 0, spent_in_period: 0, period_resets_at: null, created_at: stored.created_at };
    await appendAudit(trx, admin.actor, { action: 'workspace.create', workspaceId: stored.id, targetId: stored.id, after: auditedWorkspace(view) });
    return stored;
  });
  // Read after the commit: on SQLite a query outside the transaction waits for it to end.
  return (await views(admin, [row]))[0];
}

export async function updateWorkspace(admin: AdminScope, id: string, input: WorkspaceInput): Promise<WorkspaceView> {
  const existing = await admin.workspace(id);
  if (input.spend_cap === undefined && input.spend_cap_period === undefined) return (await views(admin, [existing]))[0];
  const period = input.spend_cap_period === undefined ? undefined : parseBudgetPeriod(input.spend_cap_period, 'spend_cap_period');
  const after = await admin.db.transaction().execute(async (trx) => {
    const before = await findWorkspaceById(trx, existing.id);
    if (!before) throw new NotFoundError(`no workspace with id "${id}"`, 'workspace_not_found');
    const cap = input.spend_cap === undefined ? before.spend_cap_micros : capMicros(input.spend_cap);
    await writeSubjectBudget(trx, 'workspace', before.id, { capMicros: cap, period });
    const next = { ...before, spend_cap_micros: cap, spend_cap_period: period ?? before.spend_cap_period };
    await appendAudit(trx, admin.actor, {
      action: 'workspace.cap',
      workspaceId: before.id,
      targetId: before.id,
      before: { spend_cap: usd(before.spend_cap_micros), spend_cap_period: before.spend_cap_period },
      after: { spend_cap: usd(cap), spend_cap_period: next.spend_cap_period },
    });
    return next;
  });
  return (await views(admin, [after]))[0];
}
