// Admin commands for spending caps and usage: caps apply to the next request, no restart needed.
import { formatMoney } from '../../billing/spend-caps.js';
import { parseUsageRange, usageReport, usageTotals } from '../../billing/usage-report.js';
import { ValidationError } from '../../errors.js';
import type { KeyInput } from '../../admin/service.js';
import { adminOf, type AdminCommand } from './command.js';
import { expiryFrom, parseMoney, parseScopeList, workspaceNamed } from './keys.js';

/** `--spend-cap 25.00` sets a cap; `--spend-cap none` removes it. */
function parseCap(value: unknown): number | null {
  if (value === undefined) throw new ValidationError('--spend-cap AMOUNT (or "none") is required', 'spend-cap');
  return value === 'none' ? null : parseMoney(value, 'spend-cap');
}

const capText = (micros: number | null) => (micros === null ? 'none' : `${formatMoney(micros)} USD`);

export const commands: AdminCommand[] = [
  {
    name: 'key update',
    usage: 'ID [--spend-cap AMOUNT|none] [--scopes a,b|all] [--expires-in 30d|never]',
    options: { 'spend-cap': { type: 'string' }, scopes: { type: 'string' }, 'expires-in': { type: 'string' } },
    async run(ctx) {
      const id = ctx.positionals[0];
      if (!id) throw new ValidationError('key update needs a key ID', 'id');
      const { scopes, 'expires-in': expiresIn, 'spend-cap': spendCap } = ctx.values;
      if (scopes === undefined && expiresIn === undefined && spendCap === undefined) throw new ValidationError('key update needs --spend-cap, --scopes or --expires-in', 'spend-cap');
      const input: KeyInput = {};
      if (spendCap !== undefined) input.spend_cap = ((cap) => (cap === null ? null : cap / 1e6))(parseCap(spendCap));
      if (scopes !== undefined) input.scopes = scopes === 'all' ? [] : parseScopeList(scopes);
      if (expiresIn !== undefined) input.expires_at = expiresIn === 'never' ? null : expiryFrom(expiresIn);
      const key = await adminOf(ctx).updateKey(id, input);
      const changed = [
        spendCap !== undefined ? `spend cap ${capText(key.spend_cap === null ? null : Math.round(key.spend_cap * 1e6))}` : '',
        scopes !== undefined ? `scopes ${key.scopes.join(',') || 'all'}` : '',
        expiresIn !== undefined ? `expires ${key.expires_at === null ? 'never' : new Date(key.expires_at * 1000).toISOString()}` : '',
      ];
      ctx.print(`key ${id}: ${changed.filter(Boolean).join(', ')}`);
    },
  },
  {
    name: 'workspace update',
    usage: 'NAME --spend-cap AMOUNT|none',
    options: { 'spend-cap': { type: 'string' } },
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.positionals[0]);
      const cap = parseCap(ctx.values['spend-cap']);
      await adminOf(ctx).updateWorkspace(workspace.id, { spend_cap: cap === null ? null : cap / 1e6 });
      ctx.print(`workspace ${workspace.name}: spend cap ${capText(cap)}`);
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
      const spent = await ctx.db.selectFrom('spend_totals').select('spent_micros').where('scope', '=', 'workspace').where('subject_id', '=', workspace.id).executeTakeFirst();
      ctx.print(`workspace ${workspace.name}: spend cap ${capText(workspace.spend_cap_micros)}, spent in all ${formatMoney(spent?.spent_micros ?? 0)} USD`);
    },
  },
];
