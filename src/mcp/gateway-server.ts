// The gateway as an MCP server (the official SDK's low-level Server), made for one HTTP request of one key: tools/list
// shows the tools the key may call (every granted server's, named `{server}__{tool}`, at /mcp; one server's at
// /mcp/{server}); tools/call checks the grant, draws on the rate limits, reserves the tool's price, calls the upstream
// with the gateway's credential (relaying its progress), settles once, and leaves a request-log row and metrics.
// Resources and prompts are relayed beside them (catalog.ts).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { LimitError } from '../base/errors.js';
import type { Charge } from '../billing/meter.js';
import type { McpServerConfig } from '../config/types.js';
import { errorCodeOf, errorTypeOf, logCall, statusOf } from './call-log.js';
import { registerCatalog } from './catalog.js';
import { allPages, fromEach, NAME_SEPARATOR, resolveName, shownName, toMcpError, withServer, type McpGatewayDeps, type McpRequest } from './request.js';
import type { UpstreamSession } from './upstream.js';

export type { McpGatewayDeps, McpRequest } from './request.js';

const MICROS = 1_000_000;

/** A tool's price per call in USD (the server's one price, or its price for this tool, else its `*` price). */
export function priceOf(server: McpServerConfig, tool: string): number {
  const price = server.pricePerCall;
  if (price === undefined) return 0;
  if (typeof price === 'number') return price;
  return price[tool] ?? price['*'] ?? 0;
}

export function createGatewayServer(deps: McpGatewayDeps, request: McpRequest): Server {
  const server = new Server({ name: 'relay-gateway', version: '1' }, { capabilities: { tools: {}, resources: {}, prompts: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => ({ tools: await listTools(deps, request, extra.signal) }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => callTool(deps, request, req.params, extra));
  registerCatalog(server, deps, request);
  return server;
}

/** The key's tools of every server in view, listed in parallel. */
function listTools(deps: McpGatewayDeps, request: McpRequest, signal: AbortSignal): Promise<Tool[]> {
  return fromEach(deps, request, signal, async (session, server) => {
    const may = request.grants.get(server.id)!;
    const tools = await allPages(async (cursor) => {
      const answer = await session.client.listTools(cursor ? { cursor } : undefined, { signal: session.signal, timeout: server.timeoutSeconds * 1000 });
      return { items: answer.tools, nextCursor: answer.nextCursor };
    });
    return tools.filter((tool) => may(tool.name)).map((tool) => ({ ...tool, name: shownName(request, server, tool.name) }));
  });
}

type CallParams = { name: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: string | number } };
type CallExtra = { signal: AbortSignal; sendNotification: (n: { method: 'notifications/progress'; params: Record<string, unknown> }) => Promise<void> };

async function callTool(deps: McpGatewayDeps, request: McpRequest, params: CallParams, extra: CallExtra): Promise<CallToolResult> {
  const startedAt = deps.now();
  const target = resolveName(request, params.name);
  // The name is the client's: bounded before it is shown or logged.
  const shown = params.name.slice(0, 128);
  if (!target || !request.grants.get(target.server.id)!(target.name)) {
    const refused = new McpError(ErrorCode.InvalidParams, `tool "${shown}" is not available to this key`, { status: 403, code: 'mcp_tool_not_granted' });
    logCall(deps, request, { method: 'tools/call', server: request.only ?? '', name: shown, status: 403, error: 'mcp_tool_not_granted', errorType: 'permission_error', startedAt, costMicros: 0 });
    throw refused;
  }
  const { server, name: tool } = target;
  const priceMicros = Math.round(priceOf(server, tool) * MICROS);
  let charge: Charge | undefined;
  let result: CallToolResult | undefined;
  let failure: unknown;
  let costMicros = 0;
  try {
    await deps.limit([
      { key: `mcp:${server.id}:key:${request.auth.keyId}`, perMinute: server.rateLimits.perKey, owner: `this key on MCP server "${server.id}"` },
      { key: `mcp:${server.id}:tool:${tool}`, perMinute: server.rateLimits.perTool[tool] ?? 0, owner: `tool "${tool}" of MCP server "${server.id}"` },
    ]);
    if (priceMicros > 0) {
      const route = { model: { id: `${server.id}${NAME_SEPARATOR}${tool}`, kind: 'mcp_tool', price: { currency: 'USD', perCall: priceOf(server, tool) } }, channel: { id: server.id } };
      charge = await deps.meter.begin({ auth: request.auth, route, requestId: request.requestId, estimateMicros: priceMicros });
    }
    result = await withServer(deps, request, server, extra.signal, (session) => relayCall(session, server, tool, params, extra));
    // The tool ran (even when its result says it failed): its price is due.
    if (charge) costMicros = (await charge.settle({ costMicros: priceMicros, units: 1 })).chargedMicros;
    return result;
  } catch (err) {
    failure = err;
    throw toMcpError(err);
  } finally {
    await charge?.close();
    const error = failure === undefined ? (result?.isError ? 'tool_error' : null) : errorCodeOf(failure);
    logCall(deps, request, { method: 'tools/call', server: server.id, name: tool, status: failure === undefined ? 200 : statusOf(failure), error, errorType: failure === undefined ? (error && 'tool_error') : errorTypeOf(failure), startedAt, costMicros, args: params.arguments, result: result ?? { error: toMcpError(failure).message } });
  }
}

/** The upstream's call, its progress relayed to the caller under the caller's token, its answer bounded. */
async function relayCall(session: UpstreamSession, server: McpServerConfig, tool: string, params: CallParams, extra: CallExtra): Promise<CallToolResult> {
  const progressToken = params._meta?.progressToken;
  const onprogress =
    progressToken === undefined
      ? undefined
      : (progress: { progress: number; total?: number; message?: string }) => void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => undefined);
  const result = (await session.client.callTool({ name: tool, arguments: params.arguments }, undefined, { signal: AbortSignal.any([extra.signal, session.signal]), timeout: server.timeoutSeconds * 1000, onprogress })) as CallToolResult;
  // A command server's answer has no byte stream to count: it is measured once whole.
  if (server.command && Buffer.byteLength(JSON.stringify(result)) > server.maxResultBytes) throw new LimitError(`MCP server "${server.id}" answered more than its limit of ${server.maxResultBytes} bytes (maxResultBytes)`, 'mcp_result_too_large');
  return result;
}
