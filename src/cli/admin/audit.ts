// Admin commands for the audit log, the request log and admin tokens.
import { newAdminToken } from '../../admin/auth.js';
import { ValidationError } from '../../base/errors.js';
import { adminOf, type AdminCommand } from './command.js';
import { workspaceNamed } from './keys.js';

export const commands: AdminCommand[] = [
  {
    name: 'audit',
    usage: '[--workspace NAME] [--limit 50] [--json]  (newest first)',
    options: { workspace: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    async run(ctx) {
      const workspace = ctx.values.workspace === undefined ? undefined : await workspaceNamed(ctx, ctx.values.workspace);
      const limit = ctx.values.limit === undefined ? 50 : Number(ctx.values.limit);
      const page = await adminOf(ctx).audit({ workspace_id: workspace?.id, limit });
      if (ctx.values.json) return ctx.print(JSON.stringify(page));
      for (const r of page.data) {
        const change = [r.before === null ? '' : `before=${JSON.stringify(r.before)}`, r.after === null ? '' : `after=${JSON.stringify(r.after)}`].filter(Boolean).join('  ');
        ctx.print(`${r.at}  ${r.actor.kind}:${r.actor.id}${r.address ? `@${r.address}` : ''}  ${r.action}  ${r.target_id ?? '-'}  ${change}`);
      }
      if (!page.data.length) ctx.print('no audit rows');
    },
  },
  {
    name: 'logs',
    usage: '--workspace NAME [--status success|error] [--model M] [--key KEY_ID] [--route R] [--guardrail block|redact|flag] [--since ISO] [--until ISO] [--limit 50] [--cursor C] [--json | --csv]  (request log, newest first; --csv: every matching row)',
    options: {
      workspace: { type: 'string' },
      status: { type: 'string' },
      model: { type: 'string' },
      key: { type: 'string' },
      route: { type: 'string' },
      guardrail: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
      json: { type: 'boolean' },
      csv: { type: 'boolean' },
    },
    async run(ctx) {
      if (typeof ctx.values.workspace !== 'string') throw new ValidationError('--workspace NAME is required', 'workspace');
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      const v = ctx.values as Record<string, string | undefined>;
      const query = { status: v.status, model: v.model, key_id: v.key, route: v.route, guardrail: v.guardrail, since: v.since, until: v.until, cursor: v.cursor, limit: v.limit === undefined ? 50 : Number(v.limit) };
      if (ctx.values.csv) {
        // The export of the dashboard and the admin API: every matching row, the header first.
        for await (const line of await adminOf(ctx).requestsCsv(workspace.id, query)) ctx.print(line.replace(/\r\n$/, ''));
        return;
      }
      const page = await adminOf(ctx).requests(workspace.id, query);
      if (ctx.values.json) return ctx.print(JSON.stringify(page));
      for (const r of page.data) {
        const tokens = `${r.input_tokens}/${r.output_tokens}`;
        ctx.print(`${r.created_at}  ${r.request_id}  ${r.status}  ${r.route}  ${r.model || '-'}  ${r.key_name ?? r.key_id}  ${r.latency_ms}ms  tokens=${tokens}  cost=${r.cost} ${r.currency}${r.error_code ? `  error=${r.error_code}` : ''}`);
      }
      if (!page.data.length) ctx.print('no requests');
      if (page.next_cursor) ctx.print(`more: --cursor ${page.next_cursor}`);
    },
  },
  {
    name: 'admin-token create',
    usage: '--id NAME  (prints a new admin token once, and the admin.tokens entry that admits it)',
    options: { id: { type: 'string' } },
    async run(ctx) {
      const id = ctx.values.id;
      if (typeof id !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(id)) throw new ValidationError('--id must be 1 to 64 letters, digits, ".", "_" or "-"', 'id');
      const { token, sha256 } = newAdminToken();
      ctx.print(`admin token ${id}: ${token}`);
      ctx.print('Store it now: it is not shown again. Add this to the config (admin.tokens) and reload:');
      ctx.print(`  - id: ${id}\n    sha256: ${sha256}`);
    },
  },
];
