// What Settings > MCP tools shows (docs/mcp.md, "Dashboard"): each MCP server the gateway serves (how it is reached and
// authenticated, its price, the tools it exposes and whether this workspace's grants cover each), every grant this
// workspace and its keys hold (the config file's read-only), and reading the grant form.
import { ValidationError } from '../base/errors.js';
import type { McpServerConfig, McpSetup } from '../config/types.js';
import type { ServerTools } from '../mcp/inventory.js';
import { namesMatcher } from '../mcp/grants.js';
import type { ApiKeyRow } from '../store/api-keys.js';
import type { StoredMcpGrant } from '../store/mcp-grants.js';

/** Tool names or patterns one grant may hold, as the admin API allows. */
const MAX_TOOLS = 256;
const TOOL_NAME = /^[A-Za-z0-9_.*\-/:]{1,128}$/;

export interface ServerView {
  id: string;
  reached: string;
  credential: string;
  price: string;
  tools?: { name: string; description: string; workspaceMay: boolean }[];
  unlisted?: string;
}

export interface GrantView {
  /** `workspace`, or a key's id: what the remove form sends. */
  subject: string;
  label: string;
  server: string;
  tools: string;
  /** False for the config file's grants, changed by editing it. */
  removable: boolean;
}

function credentialOf(server: McpServerConfig): string {
  if (server.command) return 'env of the command';
  if (server.passthrough) return `each user's own token (header ${server.passthrough.from})`;
  if (!server.credential) return 'none';
  const kind = Array.isArray(server.credential) ? server.credential[0]?.kind : (server.credential as { kind?: string }).kind;
  return kind === 'oauth2-client-credentials' ? 'OAuth 2 client credentials' : 'static key';
}

function priceOf(server: McpServerConfig): string {
  const price = server.pricePerCall;
  if (price === undefined || price === 0) return 'free';
  if (typeof price === 'number') return `$${price} per call`;
  return Object.entries(price).map(([tool, usd]) => `${tool}: $${usd}`).join(', ');
}

/** The workspace's grants by server: the config file's (by id, name or `*`) and the admin API's. */
export function workspacePatterns(setup: McpSetup, workspace: { id: string; name: string }, stored: StoredMcpGrant[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const fromConfig = setup.grants.filter((g) => g.workspace === '*' || g.workspace === workspace.id || g.workspace === workspace.name);
  for (const { server, tools } of [...fromConfig, ...stored]) out.set(server, [...(out.get(server) ?? []), ...tools]);
  return out;
}

export function serverViews(setup: McpSetup, listed: ServerTools[], patterns: Map<string, string[]>): ServerView[] {
  return [...setup.servers.values()].map((server, index) => {
    const { tools, unlisted } = listed[index];
    const may = namesMatcher(patterns.get(server.id) ?? []);
    const reached = server.command ? `stdio: ${server.command[0].split('/').at(-1)}` : new URL(server.url!).origin;
    return { id: server.id, reached, credential: credentialOf(server), price: priceOf(server), unlisted, tools: tools?.map((tool) => ({ ...tool, workspaceMay: may(tool.name) })).sort((a, b) => a.name.localeCompare(b.name)) };
  });
}

export function grantViews(setup: McpSetup, workspace: { id: string; name: string }, stored: StoredMcpGrant[], keyGrants: (StoredMcpGrant & { keyId: string })[], keys: ApiKeyRow[]): GrantView[] {
  const keyLabel = (id: string) => {
    const key = keys.find((k) => k.id === id);
    if (!key) return `key ${id}`;
    return key.name ? `key ${key.name} (${key.prefix}…)` : `key ${key.prefix}…`;
  };
  const fromConfig = setup.grants.filter((g) => g.workspace === '*' || g.workspace === workspace.id || g.workspace === workspace.name);
  return [
    ...fromConfig.map((g) => ({ subject: 'workspace', label: g.workspace === '*' ? 'every workspace (config file)' : 'this workspace (config file)', server: g.server, tools: g.tools.join(', '), removable: false })),
    ...stored.map((g) => ({ subject: 'workspace', label: 'this workspace', server: g.server, tools: g.tools.join(', '), removable: true })),
    ...keyGrants.map((g) => ({ subject: g.keyId, label: keyLabel(g.keyId), server: g.server, tools: g.tools.join(', '), removable: true })),
  ];
}

/** The grant form's tools: the ticked ones and the names or patterns typed (comma-separated); one at least. */
export function parseGrantTools(ticked: unknown, typed: unknown): string[] {
  const list = [...(Array.isArray(ticked) ? ticked : ticked === undefined ? [] : [ticked]), ...(typeof typed === 'string' ? typed.split(',') : [])].map((t) => String(t).trim()).filter(Boolean);
  if (!list.length) throw new ValidationError('tick a tool, or type names or patterns (* for every tool)', 'tools');
  if (list.length > MAX_TOOLS || !list.every((t) => TOOL_NAME.test(t))) throw new ValidationError(`tools are at most ${MAX_TOOLS} names or patterns of letters, digits and _ . - / : *`, 'tools');
  return [...new Set(list)];
}
