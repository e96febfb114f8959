// What keeps one failing channel from hurting the rest: retries within a budget (an undici interceptor) and a circuit breaker.
import { interceptors, type Dispatcher } from '../net/undici.js';
import type { ChannelConfig } from '../config/types.js';

/** Connection failures: the upstream never received the request, so sending it again cannot do its work twice. */
const connectErrors = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ENETDOWN', 'ENETUNREACH', 'EHOSTDOWN', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
const retryStatuses = [429, 500, 502, 503, 504];

/** A token bucket: every call adds `ratio` of a retry, every retry takes one, so retries stay a fraction of the calls. */
export class RetryBudget {
  private tokens: number;
  constructor(
    private readonly ratio: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }
  deposit(): void {
    this.tokens = Math.min(this.burst, this.tokens + this.ratio);
  }
  withdraw(): boolean {
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** Milliseconds a `retry-after` header asks for (seconds or an HTTP date), or undefined. */
function retryAfterMs(value: unknown): number | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : new Date(value).getTime() - Date.now();
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

type RetryError = Error & { statusCode?: number; code?: string; headers?: Record<string, string | string[] | undefined> };

/**
 * undici's retry interceptor with the gateway's rules: only connection failures, 429 and 5xx, only before the answer
 * is read (a failing answer that is not retried reaches the caller as it came), `retry-after` honoured up to
 * `maxDelayMs` (longer is not retried), and never past the channel's budget.
 */
export function retryInterceptor(channel: ChannelConfig, budget: RetryBudget, onRetry: () => void, { retry429 = true } = {}): Dispatcher.DispatcherComposeInterceptor {
  const { max, minDelayMs, maxDelayMs } = channel.retries;
  // A key pool answers a 429 with its next key (src/engine/credentials/key-moves.ts), not with the same key again, nor from the budget.
  const statuses = retry429 ? retryStatuses : retryStatuses.filter((status) => status !== 429);
  return interceptors.retry({
    maxRetries: max,
    throwOnError: false,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    statusCodes: statuses,
    errorCodes: [...connectErrors],
    retry(err, { state }, cb) {
      const { statusCode, code, headers } = err as RetryError;
      if (code && code !== 'UND_ERR_REQ_RETRY' && !connectErrors.has(code)) return cb(err);
      if (statusCode !== undefined && !statuses.includes(statusCode)) return cb(err);
      if (state.counter > max) return cb(err);
      const asked = retryAfterMs(headers?.['retry-after']);
      if (asked !== undefined && asked > maxDelayMs) return cb(err);
      if (!budget.withdraw()) return cb(err);
      onRetry();
      setTimeout(() => cb(null), asked ?? Math.min(minDelayMs * 2 ** Math.max(0, state.counter - 1), maxDelayMs)).unref();
    },
  });
}

export type CircuitState = 'closed' | 'open' | 'half-open';

/** Opens after `failures` consecutive failed calls; after `coolDownMs` lets one probe through, whose outcome decides. */
export class CircuitBreaker {
  state: CircuitState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private probing = false;

  constructor(
    private readonly threshold: number,
    private readonly coolDownMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a call may go out now; in half-open, only the one probe. */
  admit(): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'open') {
      if (this.now() - this.openedAt < this.coolDownMs) return false;
      this.state = 'half-open';
      this.probing = false;
    }
    if (this.probing) return false;
    this.probing = true;
    return true;
  }

  /** Seconds until a probe may go out. */
  retryInSeconds(): number {
    return Math.max(1, Math.ceil((this.openedAt + this.coolDownMs - this.now()) / 1000));
  }

  success(): void {
    this.state = 'closed';
    this.failures = 0;
    this.probing = false;
  }

  failure(): void {
    this.failures++;
    this.probing = false;
    if (this.state === 'half-open' || this.failures >= this.threshold) {
      this.state = 'open';
      this.openedAt = this.now();
    }
  }

  /** A call that ended without telling (the client hung up): a probe slot is freed. */
  abandon(): void {
    this.probing = false;
  }
}
