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

export class RequestLogLines extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    if (isProbe(req) && !error) return;
    const ms = Math.round(reply.elapsedTime);
    const line = `${req.method} ${redactUrl(req.url.slice(0, LOGGED_URL_LENGTH))} ${reply.statusCode} ${ms} ms`;
    if (error) reply.log.error({ status: reply.statusCode, ms, err: error }, line);
    else reply.log.info({ status: reply.statusCode, ms }, line);
  }
}
