// Admin commands for dashboard users: add one to a workspace with a role, and set a password (a one-time link, or stdin).
import { createPasswordLink, passwordLinkUrl, USER_LINK_SECONDS } from '../../dashboard/password-links.js';
import { checkNewPassword, hashPassword } from '../../dashboard/passwords.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { createUser, deleteSessionsOf, findUserByEmail, isRole, ROLES, setMembership, setPasswordHash } from '../../store/users.js';
import type { AdminCommand, AdminContext } from './command.js';
import { workspaceNamed } from './keys.js';

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}$/;

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
    ctx.print(`password set for ${email}; their other sessions are signed out`);
    return;
  }
  const token = await createPasswordLink(ctx.db, { userId }, USER_LINK_SECONDS);
  ctx.print(`one-time link for ${email} to set a password (valid 24 hours):`);
  ctx.print(`  ${passwordLinkUrl(baseUrl(ctx), token)}`);
}

export const commands: AdminCommand[] = [
  {
    name: 'user create',
    usage: `--email E --workspace NAME --role ${ROLES.join('|')} [--password-stdin]  (an existing user gets the role in that workspace)`,
    options: { email: { type: 'string' }, workspace: { type: 'string' }, role: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    async run(ctx) {
      const email = typeof ctx.values.email === 'string' ? ctx.values.email.trim() : '';
      if (!EMAIL.test(email)) throw new ValidationError('--email must be an email address', 'email');
      const role = ctx.values.role;
      if (!isRole(role)) throw new ValidationError(`--role must be one of ${ROLES.join(', ')}`, 'role');
      const workspace = await workspaceNamed(ctx, ctx.values.workspace);
      const existing = await findUserByEmail(ctx.db, email);
      const user = existing ?? (await createUser(ctx.db, email));
      await setMembership(ctx.db, user.id, workspace.id, role);
      ctx.print(`${existing ? 'updated' : 'created'} user ${user.email}: ${role} of workspace ${workspace.name}`);
      if (!existing || ctx.values['password-stdin']) await setPassword(ctx, user.id, user.email);
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
