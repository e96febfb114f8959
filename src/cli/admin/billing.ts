// Admin commands for spending caps and usage: caps apply to the next request, no restart needed.
import { formatMoney } from '../../billing/spend-caps.js';
import { parseUsageRange, usageReport, usageTotals } from '../../billing/usage-report.js';
import { ValidationError } from '../../base/errors.js';
import type { KeyInput } from '../../admin/service.js';
import { spendInPeriod } from '../../billing/budgets.js';
import { billingConfig } from '../../billing/config.js';
import { BudgetCalendar, parseBudgetPeriod, type BudgetPeriod } from '../../config/periods.js';
import { adminOf, type AdminCommand, type AdminContext } from './command.js';
import { expiryFrom, parseMoney, parseScopeList, workspaceNamed } from './keys.js';

/** `--spend-cap 25.00` sets a cap; `--spend-cap none` removes it. */
function parseCap(value: unknown): number | null {
  if (value === undefined) throw new ValidationError('--spend-cap AMOUNT (or "none") is required', 'spend-cap');
  return value === 'none' ? null : parseMoney(value, 'spend-cap');
}

const capText = (micros: number | null, period: BudgetPeriod = 'total') => (micros === null ? 'none' : `${formatMoney(micros)} USD${period === 'total' ? '' : ` ${period}`}`);
const periodNoun = { daily: 'day', weekly: 'week', monthly: 'month' } as const;

const parsePeriod = (ctx: AdminContext) => (ctx.values.period === undefined ? undefined : parseBudgetPeriod(ctx.values.period, 'period'));

/** `--model ID`: a model id as the channels name it (the CLI does not load channels, so it is not looked up). */
function parseModel(ctx: AdminContext): string | undefined {
  const model = ctx.values.model;
  if (model === undefined) return undefined;
  if (typeof model !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(model)) throw new ValidationError('--model must be a model id (1 to 128 printable characters)', 'model');
  return model;
}

/** `--spend-cap X --model M [--period P]`: the cap of a key or a workspace on one model, audited like any change. */
async function updateModelCap(ctx: AdminContext, scope: 'key' | 'workspace', id: string, model: string): Promise<string> {
  const cap = parseCap(ctx.values['spend-cap']);
  const view = await adminOf(ctx).setModelCap(scope, id, { model, spend_cap: cap === null ? null : cap / 1e6, spend_cap_period: parsePeriod(ctx) });
  return `spend cap on model ${model} ${capText(cap, view.spend_cap_period)}`;
}

export const commands: AdminCommand[] = [
  {
    name: 'key update',
    usage: 'ID [--spend-cap AMOUNT|none [--period total|daily|weekly|monthly] [--model MODEL]] [--scopes a,b|all] [--expires-in 30d|never]',
    // The scopes a key may be given are the ones its endpoint catalogue declares.
    readsScopes: true,
    options: { 'spend-cap': { type: 'string' }, period: { type: 'string' }, model: { type: 'string' }, scopes: { type: 'string' }, 'expires-in': { type: 'string' } },
    async run(ctx) {
      const id = ctx.positionals[0];
      if (!id) throw new ValidationError('key update needs a key ID', 'id');
      const { scopes, 'expires-in': expiresIn, 'spend-cap': spendCap, period } = ctx.values;
      const model = parseModel(ctx);
      if (model !== undefined) return ctx.print(`key ${id}: ${await updateModelCap(ctx, 'key', id, model)}`);
      if (scopes === undefined && expiresIn === undefined && spendCap === undefined && period === undefined) throw new ValidationError('key update needs --spend-cap, --period, --scopes or --expires-in', 'spend-cap');
      const input: KeyInput = {};
      if (spendCap !== undefined) input.spend_cap = ((cap) => (cap === null ? null : cap / 1e6))(parseCap(spendCap));
      input.spend_cap_period = parsePeriod(ctx);
      if (scopes !== undefined) input.scopes = scopes === 'all' ? [] : parseScopeList(scopes);
      if (expiresIn !== undefined) input.expires_at = expiresIn === 'never' ? null : expiryFrom(expiresIn);
      const key = await adminOf(ctx).updateKey(id, input);
      const changed = [
        spendCap !== undefined || period !== undefined ? `spend cap ${capText(key.spend_cap === null ? null : Math.round(key.spend_cap * 1e6), key.spend_cap_period)}` : '',
        scopes !== undefined ? `scopes ${key.scopes.join(',') || 'all'}` : '',
        expiresIn !== undefined ? `expires ${key.expires_at === null ? 'never' : new Date(key.expires_at * 1000).toISOString()}` : '',
      ];
      ctx.print(`key ${id}: ${changed.filter(Boolean).join(', ')}`);
    },
  },
  {
    name: 'workspace update',
    usage: 'NAME --spend-cap AMOUNT|none [--period total|daily|weekly|monthly] [--model MODEL]',
    options: { 'spend-cap': { type: 'string' }, period: { type: 'string' }, model: { type: 'string' } },
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.positionals[0]);
      const model = parseModel(ctx);
      if (model !== undefined) return ctx.print(`workspace ${workspace.name}: ${await updateModelCap(ctx, 'workspace', workspace.id, model)}`);
      const cap = parseCap(ctx.values['spend-cap']);
      const view = await adminOf(ctx).updateWorkspace(workspace.id, { spend_cap: cap === null ? null : cap / 1e6, spend_cap_period: parsePeriod(ctx) });
      ctx.print(`workspace ${workspace.name}: spend cap ${capText(cap, view.spend_cap_period)}`);
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
