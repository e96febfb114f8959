// Workspace records.
import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';
import type { WorkspacesTable } from './schema.js';
import type { BudgetPeriod } from '../config/periods.js';
import { setSubjectBudget } from './budgets.js';

export type Workspace = WorkspacesTable;

export async function createWorkspace(db: Db, name: string, now = Date.now()): Promise<Workspace> {
  const row: Workspace = { id: `ws_${randomUUID().replace(/-/g, '')}`, name, spend_cap_micros: null, spend_cap_period: 'total', created_at: Math.floor(now / 1000) };
  await db.insertInto('workspaces').values(row).execute();
  return row;
}

export async function findWorkspaceByName(db: Db, name: string): Promise<Workspace | undefined> {
  return db.selectFrom('workspaces').selectAll().where('name', '=', name).executeTakeFirst();
}

export async function findWorkspaceById(db: Db, id: string): Promise<Workspace | undefined> {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countWorkspaces(db: Db): Promise<number> {
  const row = await db.selectFrom('workspaces').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Sets the workspace's cap on all models; `period` absent keeps the one it had. False when there is no such workspace. */
export function setWorkspaceSpendCap(db: Db, id: string, capMicros: number | null, period?: BudgetPeriod): Promise<boolean> {
  return setSubjectBudget(db, 'workspace', id, { capMicros, period });
}
