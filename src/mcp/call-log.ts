// The evidence of one MCP call of a key (a tool called, a resource read, a prompt got): its request-log row (when request
// logs are on: what it was, the server, status, error, latency and cost; the arguments and the result only when body
// capture is on, redacted) and, for a tool call, its metrics.
import { GatewayError } from '../base/errors.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpGatewayDeps, McpRequest } from './request.js';
import { NAME_SEPARATOR } from './request.js';

export interface LoggedCall {
  method: 'tools/call' | 'resources/read' | 'prompts/get';
  /** The server's id; empty when the name named none the key may use. */
  server: string;
  /** The tool's or prompt's name, or the resource's URI, as the server knows it. */
  name: string;
  status: number;
  error: string | null;
  errorType: string | null;
  startedAt: number;
  costMicros: number;
  args?: unknown;
  result?: unknown;
}

export const statusOf = (err: unknown) => (err instanceof GatewayError ? err.statusCode : err instanceof McpError ? 502 : 500);
export const errorTypeOf = (err: unknown) => (err instanceof GatewayError ? err.type : 'upstream_error');
export const errorCodeOf = (err: unknown) => (err instanceof GatewayError ? err.code : err instanceof McpError ? `mcp_error_${err.code}` : 'internal_error');

/** The longest name (a resource URI may be long) a log row or a metric label keeps. */
const MAX_LOGGED_NAME = 200;

export function logCall(deps: McpGatewayDeps, request: McpRequest, call: LoggedCall): void {
  const latencyMs = deps.now() - call.startedAt;
  if (call.method === 'tools/call') deps.metrics.recordToolCall(call.server, call.name, call.status, latencyMs / 1000);
  if (!deps.requestLogs.enabled) return;
  const name = (call.server ? `${call.server}${NAME_SEPARATOR}${call.name}` : call.name).slice(0, MAX_LOGGED_NAME);
  deps.requestLogs.called(
    {
      workspaceId: request.auth.workspaceId,
      keyId: request.auth.keyId,
      startedAt: call.startedAt,
      latencyMs,
      route: 'mcp',
      method: call.method,
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
    { method: call.method, url: request.only ? `/mcp/${request.only}` : '/mcp', request: { name, arguments: call.args }, response: call.result, secrets: [request.key, ...request.userTokens.values()] },
  );
}
