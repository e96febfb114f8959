// Responses requests with an `mcp` tool naming one of the gateway's MCP servers (docs/mcp.md, "Responses with gateway MCP
// servers"): `server_url: "gateway://<server>"`, or the gateway's own `<address>/mcp/<server>`. The upstream keeps running
// the tool loop it runs for any remote MCP server, but the URL it is given is the gateway's /mcp/{server} and the token a
// relay token for this key on that server alone, so every listing and call comes back through the gateway: granted,
// limited, priced and logged, with the gateway's credential for the server. The client's own authorization is dropped.
import { hasScope, type AuthContext } from '../auth/authenticate.js';
import { clientValue, GatewayError, ValidationError } from '../base/errors.js';
import type { McpSetup } from '../config/types.js';
import type { Db } from '../store/database.js';
import { MCP_SCOPE, toolGrants, type ToolGrants } from './grants.js';
import { mintRelayToken } from './relay-tokens.js';

/** The scheme that names a gateway MCP server wherever the gateway's address is not known to the client. */
export const GATEWAY_SCHEME = 'gateway://';
const SERVER_ID = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;

type Tool = Record<string, unknown>;

export interface GatewayToolsContext {
  db: Db;
  setup: McpSetup;
  auth: AuthContext;
  /** The gateway's address as the client reached it (server.publicUrl when set): what the upstream calls back. */
  baseUrl: string;
  now: number;
}

const trimmed = (path: string) => path.replace(/\/+$/, '');

/**
 * The gateway server a tool's `server_url` names, or undefined when it names none (any other MCP server, relayed as it
 * is). The gateway's own /mcp (every server at once) is refused: a tool names one server.
 */
export function gatewayServerOf(serverUrl: string, baseUrl: string, param: string): string | undefined {
  let path: string | undefined;
  if (serverUrl.toLowerCase().startsWith(GATEWAY_SCHEME)) path = `/mcp/${serverUrl.slice(GATEWAY_SCHEME.length)}`;
  else {
    const url = URL.canParse(serverUrl) ? new URL(serverUrl) : undefined;
    const base = new URL(baseUrl);
    const prefix = trimmed(base.pathname);
    if (!url || url.origin !== base.origin || !url.pathname.startsWith(`${prefix}/mcp`) || url.search) return undefined;
    path = url.pathname.slice(prefix.length);
  }
  const rest = trimmed(path);
  if (rest === '/mcp') throw new ValidationError(`${param} names the gateway's /mcp, which serves every server at once: name one server, as gateway://<server> or <gateway>/mcp/<server>`, param, 'mcp_server_not_found');
  const id = rest.startsWith('/mcp/') ? rest.slice('/mcp/'.length) : undefined;
  if (id === undefined) return undefined;
  if (!SERVER_ID.test(id)) throw new ValidationError(`${param} ${clientValue(serverUrl)} does not name an MCP server of this gateway`, param, 'mcp_server_not_found');
  return id;
}

/** Refused: a server the key may not use, named (an unknown one reads the same: no server's existence is told). */
function notAvailable(id: string, param: string, why: string): GatewayError {
  return new GatewayError('mcp_server_not_granted', 403, 'permission_error', `MCP server "${id}" (${param}) is not available to this key: ${why}`, { param });
}

/**
 * Points every `mcp` tool of `tools` that names a gateway server at the gateway, with a relay token for this key in its
 * `authorization` (the client's, and any authorization header it set, removed); true when one was. A server the key may
 * not use is a 403 naming it, before anything is reserved or sent.
 */
export async function serveGatewayMcpTools(ctx: GatewayToolsContext, tools: readonly unknown[]): Promise<boolean> {
  let grants: ToolGrants | undefined;
  let changed = false;
  for (const [index, tool] of tools.entries()) {
    if (!tool || typeof tool !== 'object' || (tool as Tool).type !== 'mcp' || typeof (tool as Tool).server_url !== 'string') continue;
    const param = `tools[${index}].server_url`;
    const id = gatewayServerOf((tool as Tool).server_url as string, ctx.baseUrl, param);
    if (id === undefined) continue;
    if (!hasScope(ctx.auth, MCP_SCOPE)) throw notAvailable(id, param, `the key lacks the scope "${MCP_SCOPE}"`);
    grants ??= await toolGrants(ctx.db, ctx.setup, ctx.auth);
    if (!ctx.setup.servers.has(id) || !grants.has(id)) throw notAvailable(id, param, 'no grant names it (docs/mcp.md, "Grants")');
    pointAtGateway(tool as Tool, `${trimmed(ctx.baseUrl)}/mcp/${id}`, await mintRelayToken(ctx.db, ctx.auth.keyId, id, ctx.setup.relayTokenSeconds, ctx.now));
    changed = true;
  }
  return changed;
}

function pointAtGateway(tool: Tool, url: string, token: string): void {
  tool.server_url = url;
  tool.authorization = token;
  const headers = tool.headers;
  if (!headers || typeof headers !== 'object') return;
  // Headers other than authorization stay: a server's passthrough header carries the user's own token (docs/mcp.md).
  const kept = Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization');
  if (kept.length) tool.headers = Object.fromEntries(kept);
  else delete tool.headers;
}
