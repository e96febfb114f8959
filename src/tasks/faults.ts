// Tells the upstream's trouble (polled again later) from the gateway's own faults (the task fails at once, its charge released).
import { ChannelUnavailableError, GatewayError } from '../errors.js';

/**
 * Whether a failed call says something about the upstream that time may change: an answer it gave (any status), an
 * unreachable or slow upstream, a malformed answer, an open circuit, a deadline. Anything else is the gateway's own fault
 * (an operation its protocol does not declare, a mapping that cannot render the answer), which waiting will not mend.
 */
export function isUpstreamTrouble(err: unknown): boolean {
  if (err instanceof ChannelUnavailableError) return true;
  if (err instanceof GatewayError) return err.upstreamStatus !== undefined || err.type === 'upstream_error';
  const name = (err as Error | undefined)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}

/** The code and the message a task failed by a fault of the gateway's own shows its client. */
export function faultReason(err: unknown): { code: string; message: string } {
  if (err instanceof GatewayError) return { code: err.code, message: err.expose ? err.message : 'the gateway could not read the task' };
  return { code: 'task_failed', message: 'the gateway could not read the task' };
}
