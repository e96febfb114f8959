// Caps of a key or a workspace on one model, in the admin service: list them with their spend in the current period,
// set one or remove it (spend_cap null), in one transaction with its audit row (`key.model_cap`, `workspace.model_cap`).
import { spendInPeriod } from '../billing/budgets.js';
import { parseBudgetPeriod, type BudgetPeriod } from '../config/periods.js';
import { ValidationError } from '../base/errors.js';
import { appendAudit } from '../store/audit.js';
import { writeModelCap, type BudgetScope } from '../store/budgets.js';
import type { AdminScope } from './scope.js';
import { capMicros, checkModelId, periodFields, usd, type ModelCapInput, type ModelCapView } from './views.js';

/** The subject in reach (404 otherwise) and the workspace its audit row belongs to. */
async function subject(admin: AdminScope, scope: BudgetScope, id: string): Promise<{ id: string; workspaceId: string }> {
  if (scope === 'key') {
    const key = await admin.keyRow(id);
    return { id: key.id, workspaceId: key.workspace_id };
  }
  const workspace = await admin.workspace(id);
  return { id: workspace.id, workspaceId: workspace.id };
}

async function view(admin: AdminScope, scope: BudgetScope, id: string, cap: { model: string; cap_micros: number | null; period: BudgetPeriod }): Promise<ModelCapView> {
  const spend = await spendInPeriod(admin.db, admin.calendar, scope, id, { period: cap.period, model: cap.model, at: admin.now() });
  return { model: cap.model, spend_cap: usd(cap.cap_micros), spend_cap_period: cap.period, ...periodFields(spend) };
}

const capsOf = (admin: AdminScope, scope: BudgetScope, id: string) =>
  admin.db.selectFrom('spend_model_caps').select(['model', 'cap_micros', 'period']).where('scope', '=', scope).where('subject_id', '=', id).orderBy('model').execute();

export async function listModelCaps(admin: AdminScope, scope: BudgetScope, id: string): Promise<ModelCapView[]> {
  const target = await subject(admin, scope, id);
  const caps = await capsOf(admin, scope, target.id);
  const views: ModelCapView[] = [];
  for (const cap of caps) views.push(await view(admin, scope, target.id, { ...cap, cap_micros: Number(cap.cap_micros) }));
  return views;
}

/** Checks a model cap's fields: a spelled model id the gateway serves (when it knows), an amount, a period. */
function checkInput(admin: AdminScope, input: ModelCapInput) {
  const named = checkModelId(input.model);
  const cap = capMicros(input.spend_cap);
  const period = input.spend_cap_period === undefined ? undefined : parseBudgetPeriod(input.spend_cap_period, 'spend_cap_period');
  // A cap is kept under the model's id (what the ledger records), whichever alias named it. Removing a cap on a model no
  // longer served must stay possible; setting one on a model never served is a typo.
  const served = admin.servedModelId?.(named);
  if (cap !== null && admin.servedModelId && served === undefined) throw new ValidationError(`no model "${named}" is served by this gateway`, 'model', 'model_not_found');
  return { model: served ?? named, cap, period };
}

/** Sets a key's or a workspace's cap on one model (spend_cap null removes it); removing none changes nothing. */
export async function setModelCap(admin: AdminScope, scope: BudgetScope, id: string, input: ModelCapInput): Promise<ModelCapView> {
  const target = await subject(admin, scope, id);
  const { model, cap, period } = checkInput(admin, input);
  const after = await admin.db.transaction().execute(async (trx) => {
    const found = await trx.selectFrom('spend_model_caps').select(['cap_micros', 'period']).where('scope', '=', scope).where('subject_id', '=', target.id).where('model', '=', model).executeTakeFirst();
    const before = found && { model, spend_cap: usd(Number(found.cap_micros)), spend_cap_period: found.period };
    const next = cap === null ? null : { model, spend_cap: usd(cap), spend_cap_period: period ?? before?.spend_cap_period ?? 'total' };
    if (!before && !next) return null;
    await writeModelCap(trx, scope, target.id, model, { capMicros: cap, period });
    await appendAudit(trx, admin.actor, { action: `${scope}.model_cap`, workspaceId: target.workspaceId, targetId: target.id, before: before ?? null, after: next }, admin.now());
    return next;
  });
  const shown = after ? { model, cap_micros: cap, period: after.spend_cap_period } : { model, cap_micros: null, period: 'total' as const };
  return view(admin, scope, target.id, shown);
}
