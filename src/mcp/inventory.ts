// What the dashboard shows of an MCP server (Settings > MCP tools): the tools it lists to the gateway with the gateway's
// credential, its file's allow and deny lists applied, or why they cannot be listed (a disabled server, one that takes
// each user's own token, one that fails). Loaded by the page on first view: a gateway whose dashboard never shows it
// never loads the MCP SDK.
import { GatewayError } from '../base/errors.js';
import type { McpServerConfig } from '../config/types.js';
import type { TemplateSet } from '../engine/liquid.js';
import { exposes } from './grants.js';
import { allPages, inExchange } from './request.js';
import type { McpUpstreams } from './upstream.js';

/** The longest a page waits on one server's listing. */
const PAGE_WAIT_SECONDS = 10;

export interface ServerTools {
  /** The tools the gateway exposes, when the server listed them. */
  tools?: { name: string; description: string }[];
  /** Why there is no list. */
  unlisted?: string;
}

export async function toolsOfServer(upstreams: Pick<McpUpstreams, 'open'>, server: McpServerConfig, templates: TemplateSet): Promise<ServerTools> {
  if (server.disabledReason) return { unlisted: `disabled: ${server.disabledReason}` };
  if (server.passthrough) return { unlisted: `listed with each user's own token (the "${server.passthrough.from}" header): name the tools to grant` };
  const wait = Math.min(server.timeoutSeconds, PAGE_WAIT_SECONDS) * 1000;
  try {
    const tools = await inExchange(upstreams.open(server, templates, AbortSignal.timeout(wait)), server, (session) =>
      allPages(async (cursor) => {
        const answer = await session.client.listTools(cursor ? { cursor } : undefined, { signal: session.signal, timeout: wait });
        return { items: answer.tools, nextCursor: answer.nextCursor };
      }),
    );
    return { tools: tools.filter((tool) => exposes(server, tool.name)).map((tool) => ({ name: tool.name, description: tool.description ?? '' })) };
  } catch (err) {
    return { unlisted: err instanceof GatewayError && err.expose ? err.message : `MCP server "${server.id}" could not be listed` };
  }
}
