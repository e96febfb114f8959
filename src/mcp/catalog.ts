// Resources and prompts of the upstream servers that offer them, relayed beside their tools (docs/mcp.md, "Resources and
// prompts"): a key sees those of the servers it may use (any grant on a server opens its resources and prompts; a server
// it may not use is invisible). At /mcp a prompt is named `{server}__{prompt}` and a resource's URI becomes
// `gateway://{server}/{uri}`, which says where a read goes; at /mcp/{server} both keep the server's own. A read or a get
// draws on the server's per-key rate limit and leaves a request-log row, as a tool call does.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/types.js';
import { errorCodeOf, errorTypeOf, logCall, statusOf, type LoggedCall } from './call-log.js';
import { allPages, fromEach, resolveName, shownName, toMcpError, withServer, type McpGatewayDeps, type McpRequest } from './request.js';
import type { UpstreamSession } from './upstream.js';

/** What a resource URI at /mcp starts with: `gateway://{server}/` then the server's own URI. */
export const RESOURCE_PREFIX = 'gateway://';

const outward = (request: McpRequest, server: McpServerConfig, uri: string) => (request.only ? uri : `${RESOURCE_PREFIX}${server.id}/${uri}`);

/** The server and its own URI a resource URI at this endpoint means; undefined for none the key may use. */
function inward(request: McpRequest, uri: string): { server: McpServerConfig; uri: string } | undefined {
  if (request.only) return { server: request.config.mcp.servers.get(request.only)!, uri };
  if (!uri.startsWith(RESOURCE_PREFIX)) return undefined;
  const rest = uri.slice(RESOURCE_PREFIX.length);
  const slash = rest.indexOf('/');
  const id = slash > 0 ? rest.slice(0, slash) : '';
  const server = request.config.mcp.servers.get(id);
  return server && request.grants.has(id) ? { server, uri: rest.slice(slash + 1) } : undefined;
}

type Kind = keyof Pick<ServerCapabilities, 'resources' | 'prompts'>;

const offers = (session: UpstreamSession, kind: Kind) => session.client.getServerCapabilities()?.[kind] !== undefined;
const options = (session: UpstreamSession, server: McpServerConfig) => ({ signal: session.signal, timeout: server.timeoutSeconds * 1000 });

export function registerCatalog(server: Server, deps: McpGatewayDeps, request: McpRequest): void {
  /** One list of every server in view that offers `kind`, each entry as `shown` maps it. */
  const listed = <T>(kind: Kind, signal: AbortSignal, read: (session: UpstreamSession, server: McpServerConfig) => Promise<T[]>) =>
    fromEach(deps, request, signal, (session, upstream) => (offers(session, kind) ? read(session, upstream) : Promise.resolve([])));

  server.setRequestHandler(ListResourcesRequestSchema, async (_req, extra) => ({
    resources: await listed('resources', extra.signal, async (session, upstream) => {
      const resources = await allPages(async (cursor) => {
        const answer = await session.client.listResources(cursor ? { cursor } : undefined, options(session, upstream));
        return { items: answer.resources, nextCursor: answer.nextCursor };
      });
      return resources.map((resource) => ({ ...resource, uri: outward(request, upstream, resource.uri) }));
    }),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (_req, extra) => ({
    resourceTemplates: await listed('resources', extra.signal, async (session, upstream) => {
      const templates = await allPages(async (cursor) => {
        const answer = await session.client.listResourceTemplates(cursor ? { cursor } : undefined, options(session, upstream));
        return { items: answer.resourceTemplates, nextCursor: answer.nextCursor };
      });
      return templates.map((template) => ({ ...template, uriTemplate: outward(request, upstream, template.uriTemplate) }));
    }),
  }));
  server.setRequestHandler(ListPromptsRequestSchema, async (_req, extra) => ({
    prompts: await listed('prompts', extra.signal, async (session, upstream) => {
      const prompts = await allPages(async (cursor) => {
        const answer = await session.client.listPrompts(cursor ? { cursor } : undefined, options(session, upstream));
        return { items: answer.prompts, nextCursor: answer.nextCursor };
      });
      return prompts.map((prompt) => ({ ...prompt, name: shownName(request, upstream, prompt.name) }));
    }),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const target = inward(request, req.params.uri);
    return relayOne(deps, request, { method: 'resources/read', kind: 'resources', asked: req.params.uri, target: target && { server: target.server, name: target.uri }, signal: extra.signal }, async (session, upstream) => {
      const answer = await session.client.readResource({ uri: target!.uri }, options(session, upstream));
      return { ...answer, contents: answer.contents.map((content) => ({ ...content, uri: outward(request, upstream, content.uri) })) };
    });
  });
  server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
    const target = resolveName(request, req.params.name);
    return relayOne(deps, request, { method: 'prompts/get', kind: 'prompts', asked: req.params.name, target, signal: extra.signal, args: req.params.arguments }, (session, upstream) =>
      session.client.getPrompt({ name: target!.name, arguments: req.params.arguments }, options(session, upstream)),
    );
  });
}

interface OneAsk {
  method: Extract<LoggedCall['method'], 'resources/read' | 'prompts/get'>;
  kind: Kind;
  /** The URI or name as the client sent it. */
  asked: string;
  /** The server and its own name for it; undefined when it names nothing the key may use. */
  target: { server: McpServerConfig; name: string } | undefined;
  signal: AbortSignal;
  args?: unknown;
}

/** A read or a get of one server: refused by name when not the key's, limited per key, relayed, and logged either way. */
async function relayOne<T>(deps: McpGatewayDeps, request: McpRequest, ask: OneAsk, exchange: (session: UpstreamSession, server: McpServerConfig) => Promise<T>): Promise<T> {
  const startedAt = deps.now();
  const what = ask.kind === 'resources' ? 'resource' : 'prompt';
  const log = (fields: Pick<LoggedCall, 'status' | 'error' | 'errorType' | 'result'>) =>
    logCall(deps, request, { method: ask.method, server: ask.target?.server.id ?? '', name: ask.target?.name ?? ask.asked.slice(0, 128), startedAt, costMicros: 0, args: ask.args, ...fields });
  if (!ask.target) {
    log({ status: 404, error: `mcp_${what}_not_available`, errorType: 'not_found_error' });
    throw new McpError(ErrorCode.InvalidParams, `${what} "${ask.asked.slice(0, 128)}" is not available to this key`, { status: 404, code: `mcp_${what}_not_available` });
  }
  const { server } = ask.target;
  try {
    await deps.limit([{ key: `mcp:${server.id}:key:${request.auth.keyId}`, perMinute: server.rateLimits.perKey, owner: `this key on MCP server "${server.id}"` }]);
    const result = await withServer(deps, request, server, ask.signal, (session) => {
      if (!offers(session, ask.kind)) throw new McpError(ErrorCode.MethodNotFound, `MCP server "${server.id}" offers no ${ask.kind}`);
      return exchange(session, server);
    });
    log({ status: 200, error: null, errorType: null, result });
    return result;
  } catch (err) {
    const shown = toMcpError(err);
    log({ status: statusOf(err), error: errorCodeOf(err), errorType: errorTypeOf(err), result: { error: shown.message } });
    throw shown;
  }
}
