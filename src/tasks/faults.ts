// Tells the upstream's trouble (polled again later) from the gateway's own faults (the task fails at once, its charge released).
import { ChannelUnavailableError, GatewayError } from '../errors.js';
import { RemoteFetchError } from '../net/remote-fetch.js';

/**
 * Whether a failed upstream call says something about the upstream that time may change: an answer it gave (any status),
 * a malformed answer, an open circuit, or a transport failure (unreachable, reset, aborted, past a deadline: whatever
 * undici or the socket threw, which is not a GatewayError). A GatewayError of any other kind is the gateway's own fault
 * (an operation the protocol does not declare, a mapping that cannot render), which waiting will not mend.
 */
export function isUpstreamTrouble(err: unknown): boolean {
  if (!(err instanceof GatewayError)) return true;
  return err instanceof ChannelUnavailableError || err.upstreamStatus !== undefined || err.type === 'upstream_error';
}

/** The code and the message a task failed by a fault of the gateway's own shows its client. */
export function faultReason(err: unknown): { code: string; message: string } {
  if (err instanceof GatewayError) return { code: err.code, message: err.expose ? err.message : 'the gateway could not read the task' };
  return { code: 'task_failed', message: 'the gateway could not read the task' };
}

/** Waits before attempt n+1: 0.5 s doubling to 8 s. */
export const backoffMs = (attempt: number) => Math.min(8000, 500 * 2 ** Math.min(attempt - 1, 10));
const TOLERATED = new Set([408, 425, 429]);


/** Whether trying again may get the bytes: the source was unreachable, slow or overloaded, or its body broke off. */
export function isTransient(err: unknown): boolean {
  if (err instanceof RemoteFetchError) return err.transient;
  if (err instanceof GatewayError) {
    const status = err.upstreamStatus;
    if (status !== undefined) return status >= 500 || TOLERATED.has(status);
    // The gateway's own 502/504 for an upstream it could not reach or that timed out.
    return err.statusCode === 502 || err.statusCode === 504;
  }
  // A stream that broke off while it was stored.
  return true;
}

/** A download that trying again will not mend (over the archive limit, too many redirects). */
export class PermanentFailure extends Error {}
