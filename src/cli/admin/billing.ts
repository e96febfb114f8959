// Admin commands for spending caps and usage: caps apply to the next request, no restart needed.
import { formatMoney } from '../../billing/spend-caps.js';
import { parseUsageRange, usageReport, usageTotals } from '../../billing/usage-report.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { spendInPeriod } from '../../billing/budgets.js';
import { BudgetCalendar, parseBudgetPeriod, type BudgetPeriod } from '../../billing/periods.js';
import { billingConfig } from '../../billing/config.js';
import { findApiKeyById } from '../../store/api-keys.js';
import { setModelCap, setSubjectBudget, type BudgetScope } from '../../store/budgets.js';
import type { AdminCommand, AdminContext } from './command.js';
import { parseMoney, workspaceNamed } from './keys.js';

/** `--spend-cap 25.00` sets a cap; `--spend-cap none` removes it. */
function parseCap(value: unknown): number | null {
  if (value === undefined) throw new ValidationError('--spend-cap AMOUNT (or "none") is required', 'spend-cap');
  return value === 'none' ? null : parseMoney(value, 'spend-cap');
}

const capText = (micros: number | null, period: BudgetPeriod = 'total') => (micros === null ? 'none' : `${formatMoney(micros)} USD${period === 'total' ? '' : ` ${period}`}`);

/** The model a `--model` flag names: one the config serves, so a typo cannot set a cap that never applies. */
function parseModel(ctx: AdminContext): string | undefined {
  const model = ctx.values.model;
  if (model === undefined) return undefined;
  if (typeof model !== 'string' || !ctx.config.models.has(model)) throw new ValidationError(`--model must name a configured model; "${String(model).slice(0, 64)}" is not one`, 'model');
  return model;
}

/** Sets the cap `--spend-cap`, `--period` and `--model` describe on an existing key or workspace; returns what it now reads. */
async function updateBudget(ctx: AdminContext, scope: BudgetScope, id: string): Promise<string> {
  const cap = parseCap(ctx.values['spend-cap']);
  const period = ctx.values.period === undefined ? undefined : parseBudgetPeriod(ctx.values.period, 'period');
  const model = parseModel(ctx);
  if (model !== undefined) {
    await setModelCap(ctx.db, scope, id, model, { capMicros: cap, period });
    return `spend cap on model ${model} ${capText(cap, period)}`;
  }
  await setSubjectBudget(ctx.db, scope, id, { capMicros: cap, period });
  // Without --period the cap keeps its period: say which.
  const row = await ctx.db.selectFrom(scope === 'key' ? 'api_keys' : 'workspaces').select('spend_cap_period').where('id', '=', id).executeTakeFirstOrThrow();
  return `spend cap ${capText(cap, row.spend_cap_period)}`;
}

const budgetOptions = { 'spend-cap': { type: 'string' }, period: { type: 'string' }, model: { type: 'string' } } as const;

const periodNoun = { daily: 'day', weekly: 'week', monthly: 'month' } as const;

export const commands: AdminCommand[] = [
  {
    name: 'key update',
    usage: 'ID --spend-cap AMOUNT|none [--period total|daily|weekly|monthly] [--model MODEL]',
    options: budgetOptions,
    async run(ctx) {
      const id = ctx.positionals[0];
      if (!id) throw new ValidationError('key update needs a key ID', 'id');
      if (!(await findApiKeyById(ctx.db, id))) throw new NotFoundError(`no key with id "${id}"`);
      ctx.print(`key ${id}: ${await updateBudget(ctx, 'key', id)}`);
    },
  },
  {
    name: 'workspace update',
    usage: 'NAME --spend-cap AMOUNT|none [--period total|daily|weekly|monthly] [--model MODEL]',
    options: budgetOptions,
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.positionals[0]);
      ctx.print(`workspace ${workspace.name}: ${await updateBudget(ctx, 'workspace', workspace.id)}`);
    },
  },
  {
    name: 'usage',
    usage: '--workspace NAME [--since DATE] [--until DATE] [--json]',
    options: { workspace: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' }, json: { type: 'boolean' } },
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      const range = parseUsageRange(ctx.values.since, ctx.values.until);
      const data = await usageReport(ctx.db, workspace.id, range);
      if (ctx.values.json) return ctx.print(JSON.stringify({ workspace: workspace.name, data, totals: usageTotals(data) }));
      for (const r of data) {
        ctx.print(`${r.date}  ${r.model}  ${r.key_id}  requests=${r.requests}  in=${r.input_tokens}  out=${r.output_tokens}  cost=${formatMoney(Math.round(r.cost.amount * 1e6))} ${r.cost.currency}`);
      }
      if (!data.length) ctx.print('no usage');
      for (const t of usageTotals(data)) ctx.print(`total  requests=${t.requests}  cost=${formatMoney(Math.round(t.cost.amount * 1e6))} ${t.currency}`);
      const period = workspace.spend_cap_period;
      const spent = await spendInPeriod(ctx.db, new BudgetCalendar(billingConfig(ctx.config).timeZone), 'workspace', workspace.id, { period });
      const resets = spent.resetsAt === null ? '' : ` (resets ${new Date(spent.resetsAt).toISOString()})`;
      ctx.print(`workspace ${workspace.name}: spend cap ${capText(workspace.spend_cap_micros, period)}, spent ${period === 'total' ? 'in all' : `this ${periodNoun[period]}`} ${formatMoney(spent.spentMicros)} USD${resets}`);
    },
  },
];
