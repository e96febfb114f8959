// Admin commands for the audit log and admin tokens.
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
