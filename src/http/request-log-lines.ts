// The gateway's log of requests, for people: one line per request at info (method, path, status, milliseconds
// rounded), none for health probes, instead of fastify's two (incoming, completed with a 15-digit responseTime).
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/** Characters of a request URL a log line keeps. */
export const LOGGED_URL_LENGTH = 2048;

/** Redacts signed tokens and keys from a URL before it is logged. */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:token|key|api_key)=)[^&]*/gi, '$1[REDACTED]');
}

/** Catalogue handlers that answer probes (a load balancer's, a container's every few seconds): not logged. */
const PROBES = new Set(['health', 'readiness']);

const isProbe = (req: FastifyRequest) => PROBES.has((req.routeOptions.config as { endpoint?: { handler?: string } } | undefined)?.endpoint?.handler ?? '');

/** Whether the request's logger writes info lines (pino's, or the lazy child's standing for it). */
const infoEnabled = (reply: FastifyReply) => (reply.log as { isLevelEnabled?(level: string): boolean }).isLevelEnabled?.('info') ?? true;

export class RequestLogLines extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    // At warn and above (a busy deployment's level) a request that did not fail writes nothing: nothing is built for it.
    if (!error && (!infoEnabled(reply) || isProbe(req))) return;
    const ms = Math.round(reply.elapsedTime);
    const line = `${req.method} ${redactUrl(req.url.slice(0, LOGGED_URL_LENGTH))} ${reply.statusCode} ${ms} ms`;
    if (error) reply.log.error({ status: reply.statusCode, ms, err: error }, line);
    else reply.log.info({ status: reply.statusCode, ms }, line);
  }
}
