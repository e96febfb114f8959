// Admin commands for task webhooks, through the admin service (each change writes its audit row): register an endpoint
// (its signing secret printed once), list, enable or disable, rotate the secret, delete, and the recent deliveries.
import { ValidationError } from '../../base/errors.js';
import { WebhookAdmin } from '../../admin/webhooks.js';
import { webhooksOptions } from '../../webhooks/options.js';
import { adminOf, type AdminCommand, type AdminContext } from './command.js';
import { parseScopeList, workspaceNamed } from './keys.js';
import { catalogueTaskObjects } from '../../config/read.js';
import { eventTypesOf } from '../../webhooks/events.js';

/** The webhook service; the event types (for an endpoint registered without --events) read from the catalogue's files. */
const hooksOf = (ctx: AdminContext) =>
  new WebhookAdmin(adminOf(ctx), (ctx.config.gateway.network as { allowHosts: string[] }).allowHosts, () => eventTypesOf(catalogueTaskObjects(ctx.config.file, process.env)));

function idOf(ctx: AdminContext, command: string): string {
  const id = ctx.positionals[0];
  if (!id) throw new ValidationError(`${command} needs an endpoint ID (whep_...)`, 'id');
  return id;
}

const onOff = (enabled: boolean) => (enabled ? 'enabled' : 'DISABLED');

/** enable and disable: the same command but for the flag. */
const toggle = (enabled: boolean): AdminCommand => ({
  name: `webhook ${enabled ? 'enable' : 'disable'}`,
  usage: 'ID',
  options: {},
  async run(ctx) {
    const endpoint = await hooksOf(ctx).update(idOf(ctx, `webhook ${enabled ? 'enable' : 'disable'}`), { enabled });
    ctx.print(`${endpoint.id} ${onOff(endpoint.enabled)}`);
  },
});

export const commands: AdminCommand[] = [
  {
    name: 'webhook create',
    usage: "--workspace NAME --url https://... [--events video.completed,video.failed,batch.completed,...] [--json]  (default: every task family's and batch event)",
    options: { workspace: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' }, json: { type: 'boolean' } },
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      if (typeof ctx.values.url !== 'string') throw new ValidationError('--url https://... is required', 'url');
      const events = ctx.values.events === undefined ? undefined : parseScopeList(ctx.values.events);
      const created = await hooksOf(ctx).create(workspace.id, { url: ctx.values.url, events });
      if (ctx.values.json) return ctx.print(JSON.stringify(created));
      ctx.print(`webhook ${created.id} for workspace ${workspace.name}: ${created.url} (${created.events.join(', ')})`);
      ctx.print(`  signing secret: ${created.secret}`);
      ctx.print('Store it now: it is not shown again.');
    },
  },
  {
    name: 'webhook list',
    usage: '--workspace NAME [--json]',
    options: { workspace: { type: 'string' }, json: { type: 'boolean' } },
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      const rows = await hooksOf(ctx).list(workspace.id);
      if (ctx.values.json) return ctx.print(JSON.stringify(rows));
      for (const r of rows) ctx.print(`${r.id}  ${r.url}  events=${r.events.join(',')}  ${onOff(r.enabled)}`);
      if (!rows.length) ctx.print('no webhooks');
    },
  },
  toggle(true),
  toggle(false),
  {
    name: 'webhook rotate',
    usage: 'ID',
    options: {},
    async run(ctx) {
      const rotated = await hooksOf(ctx).rotate(idOf(ctx, 'webhook rotate'), webhooksOptions(ctx.config).rotationGraceMs);
      ctx.print(`new signing secret for ${rotated.id}: ${rotated.secret}`);
      ctx.print('Store it now: it is not shown again. The old secret also signs for webhooks.rotationGraceSeconds.');
    },
  },
  {
    name: 'webhook delete',
    usage: 'ID',
    options: {},
    async run(ctx) {
      const id = idOf(ctx, 'webhook delete');
      await hooksOf(ctx).delete(id);
      ctx.print(`deleted ${id}`);
    },
  },
  {
    name: 'webhook deliveries',
    usage: 'ID [--limit 20] [--json]',
    options: { limit: { type: 'string' }, json: { type: 'boolean' } },
    async run(ctx) {
      const limit = ctx.values.limit === undefined ? undefined : Number(ctx.values.limit);
      const page = await hooksOf(ctx).deliveries(idOf(ctx, 'webhook deliveries'), { limit });
      if (ctx.values.json) return ctx.print(JSON.stringify(page.data));
      for (const d of page.data) ctx.print(`${d.id}  ${d.event_type}  ${d.task_id}  ${d.status}  attempts=${d.attempts}  last=${d.last_status ?? '-'}${d.last_error ? `  ${d.last_error}` : ''}`);
      if (!page.data.length) ctx.print('no deliveries');
    },
  },
];
