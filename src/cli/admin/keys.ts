// Admin commands for workspaces and API keys.
import { issueApiKey, parseDuration } from '../../auth/keys.js';
import { toMicros } from '../../billing/cost.js';
import { parseBudgetPeriod } from '../../billing/periods.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { listApiKeys, revokeApiKey } from '../../store/api-keys.js';
import { createWorkspace, findWorkspaceByName } from '../../store/workspaces.js';
import type { AdminCommand, AdminContext } from './command.js';

export async function workspaceNamed(ctx: AdminContext, name: unknown) {
  if (typeof name !== 'string' || !name) throw new ValidationError('--workspace NAME is required', 'workspace');
  const workspace = await findWorkspaceByName(ctx.db, name);
  if (!workspace) throw new NotFoundError(`no workspace named "${name}"`);
  return workspace;
}

export function parseMoney(text: unknown, flag: string): number {
  const amount = Number(text);
  if (typeof text !== 'string' || !/^\d+(\.\d{1,6})?$/.test(text) || !Number.isFinite(amount)) throw new ValidationError(`${flag} must be an amount like 10.00`, flag);
  return toMicros(amount);
}

const iso = (seconds: number | null) => (seconds === null ? '-' : new Date(seconds * 1000).toISOString());

export const commands: AdminCommand[] = [
  {
    name: 'workspace create',
    usage: 'NAME',
    options: {},
    async run(ctx) {
      const name = ctx.positionals[0];
      if (!name) throw new ValidationError('workspace create needs a NAME', 'name');
      if (await findWorkspaceByName(ctx.db, name)) throw new ValidationError(`workspace "${name}" already exists`, 'name');
      const workspace = await createWorkspace(ctx.db, name);
      ctx.print(`created workspace ${workspace.name} (${workspace.id})`);
    },
  },
  {
    name: 'key create',
    usage: '--workspace NAME [--scopes a,b] [--expires-in 30d] [--spend-cap 10.00 [--period daily|weekly|monthly]] [--name LABEL] [--json]',
    options: { workspace: { type: 'string' }, scopes: { type: 'string' }, 'expires-in': { type: 'string' }, 'spend-cap': { type: 'string' }, period: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      const scopes = typeof ctx.values.scopes === 'string' ? ctx.values.scopes.split(',').map((s) => s.trim()).filter(Boolean) : [];
      const expiresIn = ctx.values['expires-in'];
      const issued = await issueApiKey(ctx.db, workspace, {
        scopes,
        expiresAt: typeof expiresIn === 'string' ? Math.floor(Date.now() / 1000) + parseDuration(expiresIn) : null,
        spendCapMicros: ctx.values['spend-cap'] !== undefined ? parseMoney(ctx.values['spend-cap'], 'spend-cap') : null,
        spendCapPeriod: parseBudgetPeriod(ctx.values.period, 'period'),
        name: typeof ctx.values.name === 'string' ? ctx.values.name : null,
      });
      if (ctx.values.json) ctx.print(JSON.stringify(issued));
      else {
        ctx.print(`key ${issued.id} for workspace ${issued.workspace} (scopes: ${scopes.join(',') || 'all'}, expires: ${iso(issued.expires_at)})`);
        ctx.print(`  ${issued.key}`);
        ctx.print('Store it now: it is not shown again.');
      }
    },
  },
  {
    name: 'key list',
    usage: '--workspace NAME [--json]',
    options: { workspace: { type: 'string' }, json: { type: 'boolean' } },
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      const keys = await listApiKeys(ctx.db, workspace.id);
      const rows = keys.map((k) => ({
        id: k.id,
        prefix: k.prefix,
        name: k.name,
        scopes: JSON.parse(k.scopes) as string[],
        expires_at: k.expires_at,
        revoked: k.revoked_at !== null,
        spend_cap: k.spend_cap_micros === null ? null : k.spend_cap_micros / 1e6,
        spend_cap_period: k.spend_cap_period,
      }));
      if (ctx.values.json) return ctx.print(JSON.stringify(rows));
      for (const r of rows) {
        ctx.print(`${r.id}  ${r.prefix}…  scopes=${r.scopes.join(',') || 'all'}  expires=${iso(r.expires_at)}  cap=${r.spend_cap === null ? '-' : `${r.spend_cap}${r.spend_cap_period === 'total' ? '' : ` ${r.spend_cap_period}`}`}${r.revoked ? '  REVOKED' : ''}`);
      }
      if (!rows.length) ctx.print('no keys');
    },
  },
  {
    name: 'key revoke',
    usage: 'ID',
    options: {},
    async run(ctx) {
      const id = ctx.positionals[0];
      if (!id) throw new ValidationError('key revoke needs a key ID', 'id');
      if (!(await revokeApiKey(ctx.db, id))) throw new NotFoundError(`no active key with id "${id}"`);
      ctx.print(`revoked ${id}`);
    },
  },
];
