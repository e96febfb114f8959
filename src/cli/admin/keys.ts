// Admin commands for workspaces and API keys, through the admin service (each change writes its audit row).
import { parseDuration } from '../../auth/keys.js';
import { toMicros } from '../../billing/cost.js';
import { parseBudgetPeriod } from '../../config/periods.js';
import { ValidationError } from '../../base/errors.js';
import type { KeyView } from '../../admin/service.js';
import { adminOf, type AdminCommand, type AdminContext } from './command.js';

export async function workspaceNamed(ctx: AdminContext, name: unknown) {
  if (typeof name !== 'string' || !name) throw new ValidationError('--workspace NAME is required', 'workspace');
  return adminOf(ctx).workspace(name, true);
}

export function parseMoney(text: unknown, flag: string): number {
  const amount = Number(text);
  if (typeof text !== 'string' || !/^\d+(\.\d{1,6})?$/.test(text) || !Number.isFinite(amount)) throw new ValidationError(`${flag} must be an amount like 10.00`, flag);
  return toMicros(amount);
}

export const parseScopeList = (text: unknown) => (typeof text === 'string' ? text.split(',').map((s) => s.trim()).filter(Boolean) : []);

/** `--expires-in 30d` as unix seconds from now. */
export const expiryFrom = (text: unknown) => (typeof text === 'string' ? Math.floor(Date.now() / 1000) + parseDuration(text) : null);

const iso = (seconds: number | null) => (seconds === null ? '-' : new Date(seconds * 1000).toISOString());

/** "cap=5 daily spent=0.25 (resets 2026-11-24T00:00:00.000Z)": the spend in the cap's current period, all time without one. */
function capAndSpend(r: Pick<KeyView, 'spend_cap' | 'spend_cap_period' | 'spent_in_period' | 'period_resets_at'>): string {
  const cap = r.spend_cap === null ? '-' : `${r.spend_cap}${r.spend_cap_period === 'total' ? '' : ` ${r.spend_cap_period}`}`;
  return `cap=${cap}  spent=${r.spent_in_period}${r.period_resets_at === null ? '' : ` (resets ${r.period_resets_at})`}`;
}

const cacheOptions = { off: { type: 'boolean' }, on: { type: 'boolean' }, ttl: { type: 'string' }, families: { type: 'string' }, 'max-entry-bytes': { type: 'string' }, reset: { type: 'boolean' }, json: { type: 'boolean' } } as const;
const cacheUsage = '[--off | --on] [--ttl SECONDS] [--families chat,embeddings,...] [--max-entry-bytes N] [--reset] [--json]  (no flags: show; --reset: as the operator set it)';

function positiveInteger(text: unknown, flag: string): number | undefined {
  if (text === undefined) return undefined;
  if (typeof text !== 'string' || !/^[1-9]\d{0,9}$/.test(text)) throw new ValidationError(`--${flag} must be a whole number above 0`, flag);
  return Number(text);
}

/** Shows, or changes, how a workspace or key narrows the response cache; flags not given keep what was set. */
async function cacheCommand(ctx: AdminContext, scope: 'workspace' | 'key', id: string, label: string): Promise<void> {
  const admin = adminOf(ctx);
  const v = ctx.values;
  let settings = await admin.getCacheSettings(scope, id);
  const changes = v.off || v.on || v.reset || v.ttl !== undefined || v.families !== undefined || v['max-entry-bytes'] !== undefined;
  if (v.off && v.on) throw new ValidationError('--off and --on together', 'off');
  if (changes) {
    const base = v.reset ? { enabled: true, ttlSeconds: null, families: null, maxEntryBytes: null } : settings;
    settings = await admin.setCacheSettings(scope, id, {
      enabled: v.off ? false : v.on ? true : base.enabled,
      ttlSeconds: positiveInteger(v.ttl, 'ttl') ?? base.ttlSeconds,
      families: v.families !== undefined ? parseScopeList(v.families) : base.families,
      maxEntryBytes: positiveInteger(v['max-entry-bytes'], 'max-entry-bytes') ?? base.maxEntryBytes,
    });
  }
  if (v.json) return ctx.print(JSON.stringify(settings));
  const parts = [settings.enabled ? 'on (as the route says)' : 'OFF', settings.ttlSeconds === null ? '' : `ttl<=${settings.ttlSeconds}s`, settings.families === null ? '' : `families=${settings.families.join(',') || 'none'}`, settings.maxEntryBytes === null ? '' : `maxEntryBytes=${settings.maxEntryBytes}`];
  ctx.print(`cache for ${label}: ${parts.filter(Boolean).join('  ')}`);
}

export const commands: AdminCommand[] = [
  {
    name: 'workspace list',
    usage: '[--json]',
    options: { json: { type: 'boolean' } },
    async run(ctx) {
      const rows = await adminOf(ctx).listWorkspaces();
      if (ctx.values.json) return ctx.print(JSON.stringify(rows));
      for (const w of rows) ctx.print(`${w.id}  ${w.name}  ${capAndSpend(w)}`);
      if (!rows.length) ctx.print('no workspaces');
    },
  },
  {
    name: 'workspace create',
    usage: 'NAME',
    options: {},
    async run(ctx) {
      const name = ctx.positionals[0];
      if (!name) throw new ValidationError('workspace create needs a NAME', 'name');
      const workspace = await adminOf(ctx).createWorkspace({ name });
      ctx.print(`created workspace ${workspace.name} (${workspace.id})`);
    },
  },
  {
    name: 'key create',
    usage: '--workspace NAME [--scopes a,b] [--expires-in 30d] [--spend-cap 10.00 [--period daily|weekly|monthly]] [--name LABEL] [--json]',
    // The scopes a key may be given are the ones its endpoint catalogue declares.
    readsScopes: true,
    options: { workspace: { type: 'string' }, scopes: { type: 'string' }, 'expires-in': { type: 'string' }, 'spend-cap': { type: 'string' }, period: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      const scopes = parseScopeList(ctx.values.scopes);
      const created = await adminOf(ctx).createKey(workspace.id, {
        scopes,
        expires_at: expiryFrom(ctx.values['expires-in']),
        spend_cap: ctx.values['spend-cap'] !== undefined ? parseMoney(ctx.values['spend-cap'], 'spend-cap') / 1e6 : null,
        spend_cap_period: parseBudgetPeriod(ctx.values.period, 'period'),
        name: typeof ctx.values.name === 'string' ? ctx.values.name : null,
      });
      if (ctx.values.json) ctx.print(JSON.stringify({ id: created.id, key: created.key, workspace: workspace.name, scopes: created.scopes, expires_at: created.expires_at }));
      else {
        ctx.print(`key ${created.id} for workspace ${workspace.name} (scopes: ${scopes.join(',') || 'all'}, expires: ${iso(created.expires_at)})`);
        ctx.print(`  ${created.key}`);
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
      const rows = (await adminOf(ctx).listKeys(workspace.id)).map((k) => ({
        id: k.id,
        prefix: k.prefix,
        name: k.name,
        scopes: k.scopes,
        expires_at: k.expires_at,
        revoked: k.revoked_at !== null,
        spend_cap: k.spend_cap,
        spend_cap_period: k.spend_cap_period,
        spent: k.spent,
        spent_in_period: k.spent_in_period,
        period_resets_at: k.period_resets_at,
      }));
      if (ctx.values.json) return ctx.print(JSON.stringify(rows));
      for (const r of rows) {
        ctx.print(`${r.id}  ${r.prefix}…  scopes=${r.scopes.join(',') || 'all'}  expires=${iso(r.expires_at)}  ${capAndSpend(r)}${r.revoked ? '  REVOKED' : ''}`);
      }
      if (!rows.length) ctx.print('no keys');
    },
  },
  {
    name: 'workspace cache',
    usage: `--workspace NAME ${cacheUsage}`,
    options: { workspace: { type: 'string' }, ...cacheOptions },
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      await cacheCommand(ctx, 'workspace', workspace.id, `workspace ${workspace.name}`);
    },
  },
  {
    name: 'key cache',
    usage: `ID ${cacheUsage}`,
    options: cacheOptions,
    async run(ctx) {
      const id = ctx.positionals[0];
      if (!id) throw new ValidationError('key cache needs a key ID', 'id');
      await cacheCommand(ctx, 'key', id, `key ${id}`);
    },
  },
  {
    name: 'key revoke',
    usage: 'ID',
    options: {},
    async run(ctx) {
      const id = ctx.positionals[0];
      if (!id) throw new ValidationError('key revoke needs a key ID', 'id');
      await adminOf(ctx).revokeKey(id);
      ctx.print(`revoked ${id}`);
    },
  },
];
