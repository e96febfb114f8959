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
  req: IncomingMessage;
  startedAt: number;
  /** The socket's bytesRead when the request's headers were parsed: what arrives after is this body's. */
  bytesAtStart: number;
}

/**
 * Cuts request bodies that arrive slower than `minBodyBytesPerSecond` on average once `bodyGraceMs` have passed. One
 * check every `checkIntervalMs` for all of them, running only while a body is in flight; a body is measured by its
 * socket's bytesRead, so the stream it is read from is never touched.
 *
 * A request is kept for the check only if its body is still arriving a turn of the event loop after its headers: most
 * bodies come whole with them (a chat request's), and keeping each such request until the next check (up to a second)
 * carried every one of them past the young generation's collections, a cost on every request of a busy process.
 */
export class SlowBodyGuard {
  private readonly bodies = new Map<IncomingMessage, Watched>();
  /** Requests whose headers came this turn, sorted at the next one: gone if their body is whole, else kept in `bodies`. */
  private fresh: Watched[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly timeouts: Timeouts,
    private readonly onCut: (req: IncomingMessage, bytes: number) => void,
    private readonly now: () => number = performance.now.bind(performance),
  ) {}

  watch(req: IncomingMessage): void {
    // A request injected without a socket (fastify's inject) has no bytes to count and nothing to cut.
    if (req.complete || !hasBody(req) || typeof req.socket?.bytesRead !== 'number') return;
    if (this.fresh.push({ req, startedAt: this.now(), bytesAtStart: req.socket.bytesRead }) === 1) setImmediate(sortFresh, this);
  }

  /** How many bodies are kept for the check (those still arriving a turn after their headers). */
  get watching(): number {
    return this.bodies.size;
  }

  /** Keeps the requests of the last turn whose bodies are still arriving; drops the rest. */
  sortFresh(): void {
    const fresh = this.fresh;
    if (!fresh.length) return;
    this.fresh = [];
    for (const watched of fresh) if (!watched.req.complete && !watched.req.socket.destroyed) this.bodies.set(watched.req, watched);
    if (this.bodies.size) this.timer ??= setInterval(checkBodies, this.timeouts.checkIntervalMs, this).unref();
  }

  /** Drops the bodies that ended, cuts the ones under the floor; stops checking when none is left. */
  check(): void {
    this.sortFresh();
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

function sortFresh(guard: SlowBodyGuard): void {
  guard.sortFresh();
}

function checkBodies(guard: SlowBodyGuard): void {
  guard.check();
}
