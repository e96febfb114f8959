// What a client may take of a connection before its request is whole: a body declared over the route's limit is refused
// before a byte of it is read, a body arriving slower than the floor is cut, and a refusal with body left unread closes
// the connection (a keep-alive client would otherwise send its next request behind bytes nobody reads). Headers, the
// whole request and idle connections are bounded by Node's own server limits (serverTimeouts); the rate floor is the one
// check Node has no option for.
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimitError } from '../base/errors.js';
import type { ServerConfig } from '../config/generated/config-types.js';

type Timeouts = ServerConfig['timeouts'];

/** Node's HTTP server limits from the config: fastify's requestTimeout and keepAliveTimeout, and `http` for createServer. */
export function serverTimeouts(timeouts: Timeouts) {
  const http = {
    requestTimeout: timeouts.requestMs,
    // Node refuses a headersTimeout above requestTimeout.
    headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
    connectionsCheckingInterval: timeouts.checkIntervalMs,
  };
  return { requestTimeout: timeouts.requestMs, keepAliveTimeout: timeouts.keepAliveMs, http };
}

/** The Content-Length a request declares, or undefined (chunked, or none). */
function declaredLength(req: IncomingMessage): number | undefined {
  const header = req.headers['content-length'];
  return header === undefined ? undefined : Number(header);
}

/** Refuses, before its body is read, a request whose declared length is over its route's limit. */
export function refuseDeclaredOverLimit(req: FastifyRequest, limit: number): LimitError | undefined {
  const length = declaredLength(req.raw);
  if (length === undefined || !(length > limit)) return undefined;
  return new LimitError(`request body is too large: Content-Length ${length} is over this route's limit of ${limit} bytes`, 'body_too_large');
}

/** A refusal sent while the body is still arriving ends the connection: its unread bytes must not be taken for a next request. */
export function closeIfBodyUnread(req: FastifyRequest, reply: FastifyReply): void {
  if (!req.raw.complete && hasBody(req.raw)) reply.header('connection', 'close');
}

const hasBody = (req: IncomingMessage) => req.headers['transfer-encoding'] !== undefined || (declaredLength(req) ?? 0) > 0;

interface Watched {
  startedAt: number;
  /** The socket's bytesRead when the request's headers were parsed: what arrives after is this body's. */
  bytesAtStart: number;
}

/**
 * Cuts request bodies that arrive slower than `minBodyBytesPerSecond` on average once `bodyGraceMs` have passed. One
 * check every `checkIntervalMs` for all of them, running only while a body is in flight; a body is measured by its
 * socket's bytesRead, so the stream it is read from is never touched.
 */
export class SlowBodyGuard {
  private readonly bodies = new Map<IncomingMessage, Watched>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly timeouts: Timeouts,
    private readonly onCut: (req: IncomingMessage, bytes: number) => void,
    private readonly now: () => number = performance.now.bind(performance),
  ) {}

  watch(req: IncomingMessage): void {
    // A request injected without a socket (fastify's inject) has no bytes to count and nothing to cut.
    if (req.complete || !hasBody(req) || typeof req.socket?.bytesRead !== 'number') return;
    this.bodies.set(req, { startedAt: this.now(), bytesAtStart: req.socket.bytesRead });
    this.timer ??= setInterval(checkBodies, this.timeouts.checkIntervalMs, this).unref();
  }

  /** Drops the bodies that ended, cuts the ones under the floor; stops checking when none is left. */
  check(): void {
    const now = this.now();
    const { bodyGraceMs, minBodyBytesPerSecond } = this.timeouts;
    for (const [req, { startedAt, bytesAtStart }] of this.bodies) {
      const socket = req.socket;
      if (req.complete || socket.destroyed) {
        this.bodies.delete(req);
        continue;
      }
      const elapsed = now - startedAt;
      if (elapsed < bodyGraceMs) continue;
      const bytes = socket.bytesRead - bytesAtStart;
      if (bytes >= (minBodyBytesPerSecond * elapsed) / 1000) continue;
      this.bodies.delete(req);
      this.onCut(req, bytes);
      socket.destroy();
    }
    if (this.bodies.size === 0) this.stop();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

function checkBodies(guard: SlowBodyGuard): void {
  guard.check();
}
