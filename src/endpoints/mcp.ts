// The MCP gateway's routes (docs/mcp.md): POST /mcp (every server the key may use) and POST /mcp/{server} (one), over
// Streamable HTTP with the official SDK's transport in its stateless mode: each POST is answered whole (as JSON, or as an
// event stream carrying a call's progress) by a server made for it from the key's grants, so any worker or replica can
// answer any request and no session is pinned to one process. GET (a server-initiated stream) and DELETE (ending a
// session) have nothing to serve and answer 405.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate, authenticateKeyId, presentedKey, requireScope, type AuthContext, type RateLimiter } from '../auth/authenticate.js';
import { AuthError, NotFoundError } from '../base/errors.js';
import type { McpServerConfig } from '../config/types.js';
import type { Runtime } from '../engine/runtime.js';
import type { Db } from '../store/db.js';
import type { McpGatewayDeps } from '../mcp/request.js';
import { MCP_SCOPE, toolGrants } from '../mcp/grants.js';
import { isRelayToken, keyOfRelayToken } from '../mcp/relay-tokens.js';

export { MCP_SCOPE };
/** The largest JSON-RPC message (or batch) a client may post. */
const MCP_BODY_LIMIT = 4 * 1024 * 1024;

export interface McpRouteDeps {
  db: Db;
  runtime: Runtime;
  rateLimits: RateLimiter;
  mcp: McpGatewayDeps;
}

export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  for (const url of ['/mcp', '/mcp/:server']) {
    app.route({ method: 'POST', url, bodyLimit: MCP_BODY_LIMIT, handler: (req, reply) => serve(deps, req, reply) });
    app.route({
      method: ['GET', 'DELETE'],
      url,
      handler: async (_req, reply) =>
        reply
          .code(405)
          .header('allow', 'POST')
          .send({ jsonrpc: '2.0', error: { code: -32000, message: 'this MCP endpoint is stateless: POST each message (no server-initiated stream, no session to end)' }, id: null }),
    });
  }
}

async function serve(deps: McpRouteDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const key = presentedKey(req);
  if (!key) throw new AuthError('an API key is required: send "Authorization: Bearer <key>"', 'missing_api_key');
  const only = (req.params as { server?: string }).server;
  const auth = await authenticated(deps.db, key, only);
  req.auth = auth;
  requireScope(auth, MCP_SCOPE);
  await deps.rateLimits.admit(auth);
  const hold = deps.runtime.hold();
  try {
    const config = hold.snapshot.config;
    const grants = await toolGrants(deps.db, config.mcp, auth);
    // A server the key may not use is one it cannot see.
    if (only !== undefined && (!config.mcp.servers.has(only) || !grants.has(only))) throw new NotFoundError(`no MCP server "${only.slice(0, 64)}" for this key`, 'mcp_server_not_found');
    // The MCP SDK's server is loaded on the first call that reaches here (a key checked): unused, it costs no memory.
    const [{ createGatewayServer }, { StreamableHTTPServerTransport }] = await Promise.all([import('../mcp/gateway-server.js'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]);
    const server = createGatewayServer(deps.mcp, { auth, key, requestId: req.id, config, grants, only, userTokens: userTokensOf(req, config.mcp.servers, grants) });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    reply.hijack();
    reply.raw.setHeader('x-request-id', req.id);
    const released = new Promise<void>((resolve) => reply.raw.once('close', resolve));
    await transport.handleRequest(req.raw, reply.raw, req.body);
    // The answer may still be streaming (a call's progress): the snapshot is held until it has gone.
    void released.then(() => {
      void server.close();
      hold.release();
    });
  } catch (err) {
    hold.release();
    throw err;
  }
}

/** The key presented, or the key a relay token acts for (a Responses upstream calling back, on its one server only). */
async function authenticated(db: Db, key: string, server: string | undefined): Promise<AuthContext> {
  if (!isRelayToken(key)) return authenticate(db, key);
  return authenticateKeyId(db, await keyOfRelayToken(db, key, server, Date.now()));
}

/** The user's own tokens the request carries, by server, for the servers in its grants whose credential passes one through. */
function userTokensOf(req: FastifyRequest, servers: ReadonlyMap<string, McpServerConfig>, grants: ReadonlyMap<string, unknown>): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const id of grants.keys()) {
    const from = servers.get(id)?.passthrough?.from;
    const value = from ? req.headers[from] : undefined;
    const token = Array.isArray(value) ? value[0] : value;
    if (token) tokens.set(id, token);
  }
  return tokens;
}
