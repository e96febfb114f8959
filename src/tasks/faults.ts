// Tells the upstream's trouble (polled again later) from the gateway's own faults (the task fails at once, its charge released).
import { ChannelUnavailableError, GatewayError } from '../base/errors.js';

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
