// Tool grants of the MCP gateway in the admin service (docs/mcp.md, "Grants"): a workspace's or a key's tools on one MCP
// server, listed, or set and removed (tools null) in one transaction with its audit row (`workspace.mcp_grant`, `key.mcp_grant`).
import { ValidationError } from '../base/errors.js';
import { appendAudit } from '../store/audit.js';
import { listGrants, writeGrant, type McpGrantScope, type StoredMcpGrant } from '../store/mcp-grants.js';
import type { AdminScope } from './scope.js';

export interface McpGrantInput {
  server: string;
  /** Tool names or `*` patterns; null removes the grant. */
  tools: string[] | null;
}

/** The subject in reach (404 otherwise) and the workspace its audit row belongs to. */
async function subject(admin: AdminScope, scope: McpGrantScope, id: string): Promise<{ id: string; workspaceId: string }> {
  if (scope === 'key') {
    const key = await admin.keyRow(id);
    return { id: key.id, workspaceId: key.workspace_id };
  }
  const workspace = await admin.workspace(id);
  return { id: workspace.id, workspaceId: workspace.id };
}

export async function listMcpGrants(admin: AdminScope, scope: McpGrantScope, id: string): Promise<StoredMcpGrant[]> {
  const target = await subject(admin, scope, id);
  return listGrants(admin.db, scope, target.id);
}

/** Sets a workspace's or a key's tools on one server; granting on a server the gateway does not serve is a typo (removing stays possible). */
export async function setMcpGrant(admin: AdminScope, scope: McpGrantScope, id: string, input: McpGrantInput): Promise<StoredMcpGrant | { server: string; tools: null }> {
  const target = await subject(admin, scope, id);
  const servers = admin.mcpServers?.();
  if (input.tools !== null && servers && !servers.has(input.server)) throw new ValidationError(`no MCP server "${input.server}" is served by this gateway`, 'server', 'mcp_server_not_found');
  const after = input.tools === null ? null : { server: input.server, tools: input.tools };
  await admin.db.transaction().execute(async (trx) => {
    const before = await writeGrant(trx, scope, target.id, input.server, input.tools, admin.now());
    if (!before && !after) return;
    await appendAudit(trx, admin.actor, { action: `${scope}.mcp_grant`, workspaceId: target.workspaceId, targetId: target.id, before: before ?? null, after }, admin.now());
  });
  return after ?? { server: input.server, tools: null };
}
