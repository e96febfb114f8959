// First start with an empty database: create workspace "default", one all-scope key shown once in the log, and a
// one-time link that signs the workspace's owner up to the dashboard.
import { createPasswordLink, OWNER_LINK_SECONDS, passwordLinkUrl } from './password-links.js';
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

/**
 * What a first start prints, once, before any log line about channels: plain text, not a JSON line, so the key and
 * the owner's link are the first thing a new operator sees (and can copy) whatever the log format.
 */
export function firstStartBanner(issued: Bootstrapped, baseUrl: string): string {
  const rule = '='.repeat(78);
  return [
    '',
    rule,
    `first start: created workspace "${issued.workspace}" and an all-scope API key (shown once; copy it now):`,
    '',
    `    ${issued.key}`,
    '',
    `The owner's dashboard password, within 7 days (one-time link):`,
    '',
    `    ${passwordLinkUrl(baseUrl, issued.ownerLinkToken)}`,
    rule,
    '',
    '',
  ].join('\n');
}
