// The gateway as an MCP server (the official SDK's low-level Server), made for one HTTP request of one key: tools/list
// shows the tools the key may call (every granted server's, named `{server}__{tool}`, at /mcp; one server's at
// /mcp/{server}); tools/call checks the grant, draws on the rate limits, reserves the tool's price, calls the upstream
// with the gateway's credential (relaying its progress), settles once, and leaves a request-log row and metrics.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../auth/authenticate.js';
import { GatewayError, LimitError } from '../base/errors.js';
import type { Metrics } from '../base/metrics.js';
import type { Charge, Meter } from '../billing/meter.js';
import type { CallLimiter } from '../billing/rate-limit.js';
import type { McpServerConfig } from '../config/types.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { RequestLogWriter } from '../request-logs/writer.js';
import type { ToolGrants } from './grants.js';
import { upstreamFailure, type McpUpstreams, type UpstreamSession } from './upstream.js';

/** Between a server's id and a tool's name at /mcp: server ids hold no underscore, so the first one splits. */
export const TOOL_SEPARATOR = '__';
/** Pages of an upstream's tool list read at most (a server that pages forever is cut there). */
const MAX_LIST_PAGES = 20;
const MICROS = 1_000_000;

export interface McpGatewayDeps {
  meter: Meter;
  limit: CallLimiter;
  metrics: Metrics;
  requestLogs: RequestLogWriter;
  upstreams: Pick<McpUpstreams, 'open'>;
  now: () => number;
}

/** One HTTP request's view: who calls, on which config, what they may use, and at which endpoint. */
export interface McpRequest {
  auth: AuthContext;
  /** The API key presented, kept out of captured arguments and results. */
  key: string;
  requestId: string;
  config: LoadedConfig;
  grants: ToolGrants;
  /** The server of /mcp/{server}; absent at /mcp, which aggregates. */
  only?: string;
}

/** A tool's price per call in USD (the server's one price, or its price for this tool, else its `*` price). */
export function priceOf(server: McpServerConfig, tool: string): number {
  const price = server.pricePerCall;
  if (price === undefined) return 0;
  if (typeof price === 'number') return price;
  return price[tool] ?? price['*'] ?? 0;
}

/** A gateway error as the MCP error the client shows: its message, and its HTTP status, type and code as data. */
export function toMcpError(err: unknown): McpError {
  if (err instanceof McpError) return err;
  if (err instanceof GatewayError) {
    const invalid = err.statusCode === 400 || err.statusCode === 403 || err.statusCode === 404;
    return new McpError(invalid ? ErrorCode.InvalidParams : ErrorCode.InternalError, err.expose ? err.message : 'internal error', { status: err.statusCode, type: err.type, code: err.code });
  }
  return new McpError(ErrorCode.InternalError, 'internal error', { status: 500 });
}

export function createGatewayServer(deps: McpGatewayDeps, request: McpRequest): Server {
  const server = new Server({ name: 'relay-gateway', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => ({ tools: await listTools(deps, request, extra.signal) }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => callTool(deps, request, req.params, extra));
  return server;
}

/** The key's tools of every server in view, listed in parallel; at /mcp a server that fails is left out (and logged), at /mcp/{server} it is an error. */
async function listTools(deps: McpGatewayDeps, request: McpRequest, signal: AbortSignal): Promise<Tool[]> {
  const ids = request.only ? [request.only] : [...request.grants.keys()];
  const lists = await Promise.all(
    ids.map(async (id) => {
      const server = request.config.mcp.servers.get(id)!;
      try {
        return await toolsOf(deps, request, server, signal);
      } catch (err) {
        if (request.only) throw toMcpError(err);
        return [];
      }
    }),
  );
  return lists.flat();
}

async function toolsOf(deps: McpGatewayDeps, request: McpRequest, server: McpServerConfig, signal: AbortSignal): Promise<Tool[]> {
  const may = request.grants.get(server.id)!;
  const session = await deps.upstreams.open(server, request.config.templates, signal);
  try {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const answer = await session.client.listTools(cursor ? { cursor } : undefined, { signal: session.signal, timeout: server.timeoutSeconds * 1000 });
      tools.push(...answer.tools.filter((tool) => may(tool.name)));
      cursor = answer.nextCursor;
      if (!cursor) break;
    }
    return request.only ? tools : tools.map((tool) => ({ ...tool, name: `${server.id}${TOOL_SEPARATOR}${tool.name}` }));
  } catch (err) {
    throw upstreamFailure(server, err, session.tooLarge, session.secrets);
  } finally {
    await session.close();
  }
}

type CallParams = { name: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: string | number } };
type CallExtra = { signal: AbortSignal; sendNotification: (n: { method: 'notifications/progress'; params: Record<string, unknown> }) => Promise<void> };

/** The server and tool a called name means; undefined when it names none the key may call. */
function resolveTool(request: McpRequest, name: string): { server: McpServerConfig; tool: string } | undefined {
  const at = name.indexOf(TOOL_SEPARATOR);
  const [id, tool] = request.only ? [request.only, name] : at > 0 ? [name.slice(0, at), name.slice(at + TOOL_SEPARATOR.length)] : ['', name];
  const server = request.config.mcp.servers.get(id);
  const may = request.grants.get(id);
  return server && may?.(tool) ? { server, tool } : undefined;
}

async function callTool(deps: McpGatewayDeps, request: McpRequest, params: CallParams, extra: CallExtra): Promise<CallToolResult> {
  const startedAt = deps.now();
  const target = resolveTool(request, params.name);
  // The name is the client's: bounded before it is shown or logged.
  const shown = params.name.slice(0, 128);
  if (!target) {
    const refused = new McpError(ErrorCode.InvalidParams, `tool "${shown}" is not available to this key`, { status: 403, code: 'mcp_tool_not_granted' });
    logCall(deps, request, { server: request.only ?? '', tool: shown, status: 403, error: 'mcp_tool_not_granted', errorType: 'permission_error', startedAt, costMicros: 0 });
    throw refused;
  }
  const { server, tool } = target;
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
      const route = { model: { id: `${server.id}${TOOL_SEPARATOR}${tool}`, kind: 'mcp_tool', price: { currency: 'USD', perCall: priceOf(server, tool) } }, channel: { id: server.id } };
      charge = await deps.meter.begin({ auth: request.auth, route, requestId: request.requestId, estimateMicros: priceMicros });
    }
    const session = await deps.upstreams.open(server, request.config.templates, extra.signal);
    result = await relayCall(session, server, tool, params, extra);
    // The tool ran (even when its result says it failed): its price is due.
    if (charge) costMicros = (await charge.settle({ costMicros: priceMicros, units: 1 })).chargedMicros;
    return result;
  } catch (err) {
    failure = err;
    throw toMcpError(err);
  } finally {
    await charge?.close();
    const error = failure === undefined ? (result?.isError ? 'tool_error' : null) : errorCodeOf(failure);
    logCall(deps, request, { server: server.id, tool, status: failure === undefined ? 200 : statusOf(failure), error, errorType: failure === undefined ? (error && 'tool_error') : errorTypeOf(failure), startedAt, costMicros, args: params.arguments, result: result ?? { error: toMcpError(failure).message } });
  }
}

/** The upstream's call, its progress relayed to the caller under the caller's token, its answer bounded; the exchange ends either way. */
async function relayCall(session: UpstreamSession, server: McpServerConfig, tool: string, params: CallParams, extra: CallExtra): Promise<CallToolResult> {
  const progressToken = params._meta?.progressToken;
  const onprogress =
    progressToken === undefined
      ? undefined
      : (progress: { progress: number; total?: number; message?: string }) => void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => undefined);
  try {
    const result = (await session.client.callTool({ name: tool, arguments: params.arguments }, undefined, { signal: AbortSignal.any([extra.signal, session.signal]), timeout: server.timeoutSeconds * 1000, onprogress })) as CallToolResult;
    // A command server's answer has no byte stream to count: it is measured once whole.
    if (server.command && Buffer.byteLength(JSON.stringify(result)) > server.maxResultBytes) throw new LimitError(`MCP server "${server.id}" answered more than its limit of ${server.maxResultBytes} bytes (maxResultBytes)`, 'mcp_result_too_large');
    return result;
  } catch (err) {
    throw upstreamFailure(server, err, session.tooLarge, session.secrets);
  } finally {
    await session.close();
  }
}

const statusOf = (err: unknown) => (err instanceof GatewayError ? err.statusCode : err instanceof McpError ? 502 : 500);
const errorTypeOf = (err: unknown) => (err instanceof GatewayError ? err.type : 'upstream_error');
const errorCodeOf = (err: unknown) => (err instanceof GatewayError ? err.code : err instanceof McpError ? `mcp_error_${err.code}` : 'internal_error');

interface LoggedCall {
  server: string;
  tool: string;
  status: number;
  error: string | null;
  errorType: string | null;
  startedAt: number;
  costMicros: number;
  args?: unknown;
  result?: unknown;
}

/** The call's request-log row (when request logs are on) and its metrics. */
function logCall(deps: McpGatewayDeps, request: McpRequest, call: LoggedCall): void {
  const latencyMs = deps.now() - call.startedAt;
  deps.metrics.recordToolCall(call.server, call.tool, call.status, latencyMs / 1000);
  if (!deps.requestLogs.enabled) return;
  const name = call.server ? `${call.server}${TOOL_SEPARATOR}${call.tool}` : call.tool;
  deps.requestLogs.called(
    {
      workspaceId: request.auth.workspaceId,
      keyId: request.auth.keyId,
      startedAt: call.startedAt,
      latencyMs,
      route: 'mcp',
      method: 'tools/call',
      model: name,
      channel: call.server,
      status: call.status,
      errorType: call.errorType,
      errorCode: call.error,
      units: 1,
      costMicros: call.costMicros,
      currency: call.costMicros ? 'USD' : '',
      requestId: request.requestId,
    },
    { method: 'tools/call', url: request.only ? `/mcp/${request.only}` : '/mcp', request: { name, arguments: call.args }, response: call.result, key: request.key },
  );
}
