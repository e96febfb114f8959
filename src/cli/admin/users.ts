// Admin commands for dashboard users: add one to a workspace with a role, and set a password (a one-time link, or stdin).
import { createPasswordLink, passwordLinkUrl, USER_LINK_SECONDS } from '../../auth/password-links.js';
import { checkNewPassword, hashPassword } from '../../dashboard/passwords.js';
import { NotFoundError, ValidationError } from '../../base/errors.js';
import { deleteSessionsOf, findUserByEmail, isRole, ROLES, setPasswordHash } from '../../store/users.js';
import { adminOf, type AdminCommand, type AdminContext } from './command.js';
import { workspaceNamed } from './keys.js';

/** The address a printed link points at: server.publicUrl, else the configured listen address. */
function baseUrl(ctx: AdminContext): string {
  const { publicUrl, host, port } = ctx.config.gateway.server;
  if (publicUrl) return publicUrl;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    length += (chunk as Buffer).length;
    if (length > 4096) throw new ValidationError('the password on stdin is too long', 'password');
  }
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** Sets the password from stdin, or prints a one-time link that lets the user choose it. */
async function setPassword(ctx: AdminContext, userId: string, email: string): Promise<void> {
  if (ctx.values['password-stdin']) {
    await setPasswordHash(ctx.db, userId, await hashPassword(checkNewPassword(await readStdin())));
    await deleteSessionsOf(ctx.db, userId);
    await adminOf(ctx).record('user.password', null, userId, null, { email, set: 'from stdin' });
    ctx.print(`password set for ${email}; their other sessions are signed out`);
    return;
  }
  const token = await createPasswordLink(ctx.db, { userId }, USER_LINK_SECONDS);
  await adminOf(ctx).record('user.password_link', null, userId, null, { email, valid_hours: USER_LINK_SECONDS / 3600 });
  ctx.print(`one-time link for ${email} to set a password (valid 24 hours):`);
  ctx.print(`  ${passwordLinkUrl(baseUrl(ctx), token)}`);
}

export const commands: AdminCommand[] = [
  {
    name: 'user create',
    usage: `--email E --workspace NAME --role ${ROLES.join('|')} [--password-stdin]  (an existing user gets the role in that workspace)`,
    options: { email: { type: 'string' }, workspace: { type: 'string' }, role: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    async run(ctx) {
      if (!isRole(ctx.values.role)) throw new ValidationError(`--role must be one of ${ROLES.join(', ')}`, 'role');
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      const member = await adminOf(ctx).setRole(workspace.id, { email: String(ctx.values.email ?? ''), role: String(ctx.values.role ?? '') });
      ctx.print(`${member.created ? 'created' : 'updated'} user ${member.email}: ${member.role} of workspace ${workspace.name}`);
      if (member.created || ctx.values['password-stdin']) await setPassword(ctx, member.user_id, member.email);
    },
  },
  {
    name: 'user list',
    usage: '--workspace NAME [--json]',
    options: { workspace: { type: 'string' }, json: { type: 'boolean' } },
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      const members = await adminOf(ctx).listMembers(workspace.id);
      if (ctx.values.json) return ctx.print(JSON.stringify(members));
      for (const m of members) ctx.print(`${m.user_id}  ${m.email}  ${m.role}${m.password_set ? '' : '  (no password yet)'}`);
      if (!members.length) ctx.print('no users');
    },
  },
  {
    name: 'user remove',
    usage: '--email E --workspace NAME  (takes the user out of the workspace; the account stays)',
    options: { email: { type: 'string' }, workspace: { type: 'string' } },
    async run(ctx) {
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      const user = typeof ctx.values.email === 'string' ? await findUserByEmail(ctx.db, ctx.values.email) : undefined;
      if (!user) throw new NotFoundError(`no user with email "${String(ctx.values.email ?? '').slice(0, 254)}"`);
      await adminOf(ctx).removeMember(workspace.id, user.id);
      ctx.print(`removed ${user.email} from workspace ${workspace.name}`);
    },
  },
  {
    name: 'user set-password',
    usage: '--email E [--password-stdin]  (without --password-stdin: prints a one-time link)',
    options: { email: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    async run(ctx) {
      const user = typeof ctx.values.email === 'string' ? await findUserByEmail(ctx.db, ctx.values.email) : undefined;
      if (!user) throw new NotFoundError(`no user with email "${String(ctx.values.email ?? '')}"`);
      await setPassword(ctx, user.id, user.email);
    },
  },
];
