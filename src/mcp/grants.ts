// Which tools a key may list and call (docs/mcp.md, "Grants"): a server exposes what its file's `tools.allow` names and
// `tools.deny` does not; a workspace may use what the config's `mcp.grants` and its admin-API grants give it; a key with
// grants of its own may use only those among its workspace's. Every name is checked against all three.
import type { AuthContext } from '../auth/authenticate.js';
import type { McpServerConfig, McpSetup } from '../config/types.js';
import type { Db } from '../store/db.js';
import { grantsOf, type StoredMcpGrant } from '../store/mcp-grants.js';
import { findWorkspaceById } from '../store/workspaces.js';

/** The scope a key needs for the MCP gateway (its endpoints, and gateway servers named in Responses tools). */
export const MCP_SCOPE = 'mcp.tools';

/** A list of names and `*` patterns as one test. */
export function namesMatcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.includes('*')));
  const globs = patterns.filter((p) => p.includes('*')).map((p) => new RegExp(`^${p.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`));
  return (name) => exact.has(name) || globs.some((g) => g.test(name));
}

const exposedBy = new WeakMap<McpServerConfig, (tool: string) => boolean>();

/** Whether a server's file lets the gateway expose `tool` at all. */
export function exposes(server: McpServerConfig, tool: string): boolean {
  let test = exposedBy.get(server);
  if (!test) {
    const allow = namesMatcher(server.tools.allow);
    const deny = namesMatcher(server.tools.deny);
    exposedBy.set(server, (test = (name) => allow(name) && !deny(name)));
  }
  return test(tool);
}

/** The tools one key may use: by server, a test of tool names; a server absent from it is not the key's at all. */
export type ToolGrants = Map<string, (tool: string) => boolean>;

function byServer(grants: StoredMcpGrant[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { server, tools } of grants) out.set(server, [...(out.get(server) ?? []), ...tools]);
  return out;
}

/** The grants of a key now: its workspace's (the config's and the admin API's), narrowed by its own when it has any. */
export async function toolGrants(db: Db, setup: McpSetup, auth: AuthContext): Promise<ToolGrants> {
  const stored = await grantsOf(db, auth.workspaceId, auth.keyId);
  const fromConfig = setup.grants.filter((g) => g.workspace === '*' || g.workspace === auth.workspaceId);
  // A grant may name the workspace by name: read it only when one does.
  const byName = setup.grants.some((g) => g.workspace !== '*' && g.workspace !== auth.workspaceId) ? (await findWorkspaceById(db, auth.workspaceId))?.name : undefined;
  if (byName !== undefined) fromConfig.push(...setup.grants.filter((g) => g.workspace === byName));
  const workspace = byServer([...fromConfig, ...stored.workspace]);
  const own = stored.key.length ? byServer(stored.key) : undefined;
  const grants: ToolGrants = new Map();
  for (const [id, server] of setup.servers) {
    const shared = workspace.get(id);
    if (!shared) continue;
    const mine = own ? own.get(id) : undefined;
    if (own && !mine) continue;
    const workspaceMay = namesMatcher(shared);
    const keyMay = mine ? namesMatcher(mine) : () => true;
    grants.set(id, (tool) => exposes(server, tool) && workspaceMay(tool) && keyMay(tool));
  }
  return grants;
}
