// Absolute URLs an upstream names for a task (a polling URL, a file URI needing the key): the channel's credential goes
// only to the channel's own origin or, for a poll, to a host the protocol declares (`poll.hosts`); any other URL is refused
// (poll) or fetched through the remote-fetch guard without the credential (download, and a redirect to another host).
import { request } from '../net/undici.js';
import type { ModelRoute } from '../config/types.js';
import { GatewayError } from '../base/errors.js';
import { upstreamHttpError, upstreamTransportError } from '../engine/upstream.js';
import type { CallCore } from '../pipeline/core.js';
import { DEFAULT_ANSWER_LIMIT, send, type Outgoing, type Sent } from '../pipeline/send.js';

const MAX_URL = 4096;

/** Whether `host` is `pattern` (`api.example.com`) or under it (`*.example.com`: any host below, not the domain itself). */
export function hostMatches(host: string, pattern: string): boolean {
  const name = host.toLowerCase();
  return pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1 : name === pattern;
}

const sameOrigin = (url: URL, route: ModelRoute) => url.origin === new URL(route.channel.baseUrl).origin;

/** Parses an absolute URL an answer gave; undefined for null or empty (the caller's default applies). */
export function absoluteUrl(value: unknown, what: string): URL | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  let url: URL | undefined;
  try {
    url = typeof value === 'string' && value.length <= MAX_URL ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || url.username || url.password) throw refused(`${what} is not a usable absolute URL`);
  return url;
}

const refused = (message: string) => new GatewayError('upstream_url_refused', 502, 'server_error', message);

/** Where a poll goes: the channel's origin (its pool, its credential), or a declared https host; anything else is refused. */
export function pollTarget(route: ModelRoute, url: URL, hosts: readonly string[] = []): { originPath: string } | { foreign: URL } {
  if (sameOrigin(url, route)) return { originPath: `${url.pathname}${url.search}` };
  if (url.protocol === 'https:' && (url.port === '' || url.port === '443') && hosts.some((h) => hostMatches(url.hostname, h))) return { foreign: url };
  throw refused(`the upstream named a polling URL on ${url.origin}, which is neither channel "${route.channel.id}"'s origin nor a host its protocol declares`);
}

/**
 * Sends one task call: through the pipeline's send stage to the channel's origin (the operation's path, or `originPath`),
 * or with the channel's credential to a declared host (no redirects followed). Non-2xx answers become the usual upstream errors.
 */
export async function sendTaskCall(call: CallCore, route: ModelRoute, outgoing: Outgoing, foreign?: URL): Promise<Sent> {
  if (!foreign) return send(call, [route], () => outgoing);
  const operation = route.protocol.operations[outgoing.operation];
  call.startDeadline(operation?.deadlineMs ?? route.channel.timeouts.deadlineMs);
  const method = operation?.method ?? 'GET';
  let response;
  try {
    response = await request(foreign, {
      method: method as 'GET',
      headers: { ...(await call.upstreams.headersOf(route.channel, method, foreign)), ...outgoing.headers },
      signal: call.signal,
      headersTimeout: route.channel.timeouts.headersMs,
      bodyTimeout: route.channel.timeouts.bodyMs,
    });
  } catch (err) {
    throw upstreamTransportError(err, route.channel.id);
  }
  if (response.statusCode >= 400) throw await upstreamHttpError(response, route);
  return {
    route,
    response,
    operation,
    operationName: outgoing.operation,
    timedOut: () => call.timedOut,
    answerLimit: call.config.gateway.server.upstreamAnswerMaxBytes ?? DEFAULT_ANSWER_LIMIT,
  };
}

/** Whether a download URL may carry the channel's credential: only on the channel's own origin. */
export const credentialedDownload = (route: ModelRoute, url: URL) => sameOrigin(url, route);
