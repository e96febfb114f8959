// Users and roles in the admin service: list a workspace's members, give a user (created when new) a role, take one
// out; a workspace always keeps an owner. Each change in one transaction with its audit row.
import { NotFoundError, ValidationError } from '../base/errors.js';
import { appendAudit } from '../store/audit.js';
import type { Db } from '../store/database.js';
import { ROLES, createUser, isRole, normalizeEmail } from '../store/users.js';
import type { AdminScope } from './scope.js';
import type { MemberView } from './views.js';

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}$/;

export async function listMembers(admin: AdminScope, workspaceId: string): Promise<MemberView[]> {
  const workspace = await admin.workspace(workspaceId);
  const rows = await admin.db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id as user_id', 'users.email as email', 'memberships.role as role', 'users.password_hash as password_hash'])
    .where('memberships.workspace_id', '=', workspace.id)
    .orderBy('users.email')
    .execute();
  return rows.map((r) => ({ user_id: r.user_id, email: r.email, role: r.role, password_set: r.password_hash !== null }));
}

/**
 * Gives a user (by email; created when new) a role in a workspace. `created` says whether the account is new, so a
 * caller can hand out a password link.
 */
export async function setRole(admin: AdminScope, workspaceId: string, input: { email: string; role: string }, now = admin.now()): Promise<MemberView & { created: boolean }> {
  const workspace = await admin.workspace(workspaceId);
  const email = typeof input.email === 'string' ? normalizeEmail(input.email) : '';
  if (!EMAIL.test(email)) throw new ValidationError('email must be an email address', 'email');
  if (!isRole(input.role)) throw new ValidationError(`role must be one of ${ROLES.join(', ')}`, 'role');
  const role = input.role;
  return admin.db.transaction().execute(async (trx) => {
    let user = await trx.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    const created = !user;
    user ??= await createUser(trx, email, now);
    const before = await trx.selectFrom('memberships').select('role').where('user_id', '=', user.id).where('workspace_id', '=', workspace.id).executeTakeFirst();
    if (before?.role === role) return { user_id: user.id, email, role, password_set: user.password_hash !== null, created };
    if (before?.role === 'owner') await keepAnOwner(trx, workspace.id, 'email');
    if (before) await trx.updateTable('memberships').set({ role }).where('user_id', '=', user.id).where('workspace_id', '=', workspace.id).execute();
    else await trx.insertInto('memberships').values({ user_id: user.id, workspace_id: workspace.id, role, created_at: Math.floor(now / 1000) }).execute();
    await appendAudit(trx, admin.actor, {
      action: created ? 'user.create' : 'user.role',
      workspaceId: workspace.id,
      targetId: user.id,
      before: before ? { email, role: before.role } : null,
      after: { email, role },
    }, now);
    return { user_id: user.id, email, role, password_set: user.password_hash !== null, created };
  });
}

/** Takes a user out of a workspace (the account stays, with its other workspaces); the last owner stays. */
export async function removeMember(admin: AdminScope, workspaceId: string, userId: string, now = admin.now()): Promise<void> {
  const workspace = await admin.workspace(workspaceId);
  await admin.db.transaction().execute(async (trx) => {
    const member = await trx
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select(['users.email as email', 'memberships.role as role'])
      .where('memberships.user_id', '=', String(userId).slice(0, 64))
      .where('memberships.workspace_id', '=', workspace.id)
      .executeTakeFirst();
    if (!member) throw new NotFoundError(`no member with id "${String(userId).slice(0, 64)}" in this workspace`, 'member_not_found');
    if (member.role === 'owner') await keepAnOwner(trx, workspace.id, 'user_id');
    await trx.deleteFrom('memberships').where('user_id', '=', userId).where('workspace_id', '=', workspace.id).execute();
    // Sessions read memberships on every request, so the removal applies at the user's next click.
    await appendAudit(trx, admin.actor, { action: 'user.remove', workspaceId: workspace.id, targetId: userId, before: { email: member.email, role: member.role }, after: null }, now);
  });
}

/** Refuses to take away the workspace's last owner (called before an owner is demoted or removed). */
async function keepAnOwner(trx: Db, workspaceId: string, param: string): Promise<void> {
  const owners = await trx.selectFrom('memberships').select('user_id').where('workspace_id', '=', workspaceId).where('role', '=', 'owner').execute();
  if (owners.length <= 1) throw new ValidationError('a workspace keeps at least one owner: make another member owner first', param, 'last_owner');
}
