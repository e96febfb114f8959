// What the MCP gateway's calls use, assembled once by the services: the meter, the limits (drawn from the rate store),
// the request log, metrics, and the upstream connections, which close with the services.
import type Keyv from 'keyv';
import { createCallLimiter } from '../billing/rate-limit.js';
import { rateStoreFor } from '../billing/rate-store.js';
import type { McpGatewayDeps } from './gateway-server.js';
import { McpUpstreams } from './upstream.js';

/** What the MCP gateway's calls use; its upstream connections (stdio processes) close with the services. */
export function mcpDeps(parts: Pick<McpGatewayDeps, 'meter' | 'metrics' | 'requestLogs'> & { cache: Keyv; now?: () => number }, closers: (() => Promise<void> | void)[]): McpGatewayDeps {
  const now = parts.now ?? Date.now;
  const upstreams = new McpUpstreams(now);
  closers.push(() => upstreams.close());
  return { meter: parts.meter, metrics: parts.metrics, requestLogs: parts.requestLogs, limit: createCallLimiter(rateStoreFor(parts.cache), now), upstreams, now };
}
