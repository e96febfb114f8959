// What the MCP gateway's calls use, assembled once by the services: the meter, the limits (drawn from the rate store),
// the request log, metrics, and the upstream connections, which close with the services.
import type Keyv from 'keyv';
import { createCallLimiter } from '../billing/rate-limit.js';
import { rateStoreFor } from '../billing/rate-store.js';
import type { McpGatewayDeps } from './request.js';
import type { McpUpstreams } from './upstream.js';

/** What the MCP gateway's calls use; its upstream connections (stdio processes) close with the services. */
export function mcpDeps(parts: Pick<McpGatewayDeps, 'meter' | 'metrics' | 'requestLogs'> & { cache: Keyv; now?: () => number }, closers: (() => Promise<void> | void)[]): McpGatewayDeps {
  const now = parts.now ?? Date.now;
  const upstreams = lazyUpstreams(now);
  closers.push(() => upstreams.close());
  return { meter: parts.meter, metrics: parts.metrics, requestLogs: parts.requestLogs, limit: createCallLimiter(rateStoreFor(parts.cache), now), upstreams, now };
}

/**
 * The upstream connections, the MCP SDK's client loaded on the first call: a gateway that serves no MCP call never
 * loads it (with its schemas, some 25 MiB resident).
 */
function lazyUpstreams(now: () => number): Pick<McpUpstreams, 'open' | 'close'> {
  let loaded: Promise<McpUpstreams> | undefined;
  const load = () => (loaded ??= import('./upstream.js').then(({ McpUpstreams }) => new McpUpstreams(now)));
  return {
    open: async (...args) => (await load()).open(...args),
    close: async () => {
      if (loaded) await (await loaded).close();
    },
  };
}
