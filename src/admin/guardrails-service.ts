// The guardrails a workspace or a key adds to the operator's (docs/guardrails.md), in the admin service: read, and set
// in one transaction with its audit row (`workspace.guardrails`, `key.guardrails`). Only ids the config offers
// (`offered: true`) may be added; what the operator attached to routes and models is not theirs to remove.
import { ValidationError } from '../base/errors.js';
import { appendAudit } from '../store/audit.js';
import type { AdminScope } from './scope.js';

export type GuardrailScope = 'workspace' | 'key';

export interface GuardrailsView {
  guardrails: string[];
}

const MAX_ADDED = 32;

/** The subject in reach (404 otherwise), the workspace its audit row belongs to, and what it adds now. */
async function subject(admin: AdminScope, scope: GuardrailScope, id: string): Promise<{ id: string; workspaceId: string; stored: string | null | undefined }> {
  if (scope === 'key') {
    const key = await admin.keyRow(id);
    return { id: key.id, workspaceId: key.workspace_id, stored: key.guardrails };
  }
  const workspace = await admin.workspace(id);
  return { id: workspace.id, workspaceId: workspace.id, stored: (workspace as { guardrails?: string | null }).guardrails };
}

const parsed = (stored: string | null | undefined): string[] => (stored ? (JSON.parse(stored) as string[]) : []);

export async function getGuardrails(admin: AdminScope, scope: GuardrailScope, id: string): Promise<GuardrailsView> {
  return { guardrails: parsed((await subject(admin, scope, id)).stored) };
}

/** Sets the guardrails a workspace or key adds (an empty list adds none); an id the config does not offer is refused. */
export async function setGuardrails(admin: AdminScope, scope: GuardrailScope, id: string, ids: string[]): Promise<GuardrailsView> {
  const target = await subject(admin, scope, id);
  const offered = admin.offeredGuardrails?.();
  if (ids.length > MAX_ADDED) throw new ValidationError(`at most ${MAX_ADDED} guardrails may be added`, 'guardrails');
  const refused = offered ? ids.filter((g) => !offered.has(g)) : [];
  if (refused.length) throw new ValidationError(`guardrail ${JSON.stringify(refused[0])} is not offered to workspaces and keys (offered: ${[...(offered ?? [])].join(', ') || 'none'})`, 'guardrails', 'guardrail_not_offered');
  const after = [...new Set(ids)];
  const before = parsed(target.stored);
  await admin.db.transaction().execute(async (trx) => {
    const value = after.length ? JSON.stringify(after) : null;
    if (scope === 'key') await trx.updateTable('api_keys').set({ guardrails: value }).where('id', '=', target.id).execute();
    else await trx.updateTable('workspaces').set({ guardrails: value }).where('id', '=', target.id).execute();
    await appendAudit(trx, admin.actor, { action: `${scope}.guardrails`, workspaceId: target.workspaceId, targetId: target.id, before: { guardrails: before }, after: { guardrails: after } }, admin.now());
  });
  return { guardrails: after };
}
