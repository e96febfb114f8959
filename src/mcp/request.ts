// What one MCP request of a key works with (the gateway's services for MCP, the key, its grants, the endpoint), and what
// every handler of it shares: an exchange opened with a server on the key's behalf, a listing gathered from each server in
// view, and a gateway error as the MCP error the client shows.
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../auth/authenticate.js';
import { GatewayError } from '../base/errors.js';
import type { Metrics } from '../base/metrics.js';
import type { Meter } from '../billing/meter.js';
import type { CallLimiter } from '../billing/rate-limit.js';
import type { McpServerConfig } from '../config/types.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { RequestLogWriter } from '../request-logs/writer.js';
import type { ToolGrants } from './grants.js';
import { upstreamFailure, type McpUpstreams, type UpstreamSession } from './upstream.js';

/** Between a server's id and a tool's (or a prompt's) name at /mcp: server ids hold no underscore, so the first one splits. */
export const NAME_SEPARATOR = '__';
/** Pages of an upstream's list read at most (a server that pages forever is cut there). */
const MAX_LIST_PAGES = 20;

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
  /** The user's own tokens, by server, for the servers whose credential passes one through (docs/mcp.md). */
  userTokens: ReadonlyMap<string, string>;
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

/** The servers in view: the one of /mcp/{server}, else every server the key may use. */
export const serversInView = (request: McpRequest): McpServerConfig[] => (request.only ? [request.only] : [...request.grants.keys()]).map((id) => request.config.mcp.servers.get(id)!);

/**
 * Runs `exchange` in an exchange opened with `server` for this key (its user token, where the server takes one), and
 * closes it either way; a failure is the typed error the server's failure is to the gateway's client.
 */
export function withServer<T>(deps: McpGatewayDeps, request: McpRequest, server: McpServerConfig, signal: AbortSignal, exchange: (session: UpstreamSession) => Promise<T>): Promise<T> {
  return inExchange(deps.upstreams.open(server, request.config.templates, signal, request.userTokens.get(server.id)), server, exchange);
}

/** Runs `exchange` in the exchange `opened` opens, and closes it either way; a failure is typed, as withServer's. */
export async function inExchange<T>(opened: Promise<UpstreamSession>, server: McpServerConfig, exchange: (session: UpstreamSession) => Promise<T>): Promise<T> {
  const session = await opened;
  try {
    return await exchange(session);
  } catch (err) {
    throw upstreamFailure(server, err, session.tooLarge, session.secrets);
  } finally {
    await session.close();
  }
}

/** Every page of an upstream's list, up to MAX_LIST_PAGES. */
export async function allPages<T>(read: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const answer = await read(cursor);
    items.push(...answer.items);
    cursor = answer.nextCursor;
    if (!cursor) break;
  }
  return items;
}

/**
 * A list gathered from each server in view, in parallel; at /mcp a server that fails is left out (its failure does not
 * empty everyone's list), at /mcp/{server} it is the answer's error.
 */
export async function fromEach<T>(deps: McpGatewayDeps, request: McpRequest, signal: AbortSignal, read: (session: UpstreamSession, server: McpServerConfig) => Promise<T[]>): Promise<T[]> {
  const lists = await Promise.all(
    serversInView(request).map(async (server) => {
      try {
        return await withServer(deps, request, server, signal, (session) => read(session, server));
      } catch (err) {
        if (request.only) throw toMcpError(err);
        return [];
      }
    }),
  );
  return lists.flat();
}

/** The server and name a called name means at this endpoint (`{server}__{name}` at /mcp); undefined for no server the key may use. */
export function resolveName(request: McpRequest, name: string): { server: McpServerConfig; name: string } | undefined {
  const at = name.indexOf(NAME_SEPARATOR);
  const [id, own] = request.only ? [request.only, name] : at > 0 ? [name.slice(0, at), name.slice(at + NAME_SEPARATOR.length)] : ['', name];
  const server = request.config.mcp.servers.get(id);
  return server && request.grants.has(id) ? { server, name: own } : undefined;
}

/** A name as this endpoint shows it: `{server}__{name}` at /mcp, the server's own at /mcp/{server}. */
export const shownName = (request: McpRequest, server: McpServerConfig, name: string) => (request.only ? name : `${server.id}${NAME_SEPARATOR}${name}`);
