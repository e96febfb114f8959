// First start with an empty database: create workspace "default", one all-scope key shown once in the log, and a
// one-time link that signs the workspace's owner up to the dashboard.
import { createPasswordLink, OWNER_LINK_SECONDS } from './password-links.js';
import type { Db } from '../store/database.js';
import { countWorkspaces, createWorkspace } from '../store/workspaces.js';
import { issueApiKey, type IssuedKey } from './keys.js';

export interface Bootstrapped extends IssuedKey {
  /** Token of the owner's one-time sign-up link (see passwordLinkUrl). */
  ownerLinkToken: string;
}

export async function bootstrapDefaultWorkspace(db: Db): Promise<Bootstrapped | undefined> {
  if ((await countWorkspaces(db)) > 0) return undefined;
  const workspace = await createWorkspace(db, 'default');
  const issued = await issueApiKey(db, workspace, { name: 'bootstrap' });
  return { ...issued, ownerLinkToken: await createPasswordLink(db, { workspaceId: workspace.id, role: 'owner' }, OWNER_LINK_SECONDS) };
}
