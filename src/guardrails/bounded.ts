// A check that calls out (a moderation model, the operator's guard service) runs under its guardrail's deadline
// (`timeoutMs`): past it, or when its call fails, the fail mode decides (`open` passes the text, `closed` blocks it, or
// flags it for a guardrail that only flags). The call is aborted at the deadline, and when the client's call ends. A
// spend cap the check's own call hit is the caller's answer (402), whatever the fail mode: the workspace cannot pay.
import { GatewayError } from '../base/errors.js';
import { Deadline } from '../net/deadline.js';
import type { CheckContext } from '../engine/guardrails.js';
import type { Action, Decision } from './guardrail.js';

export interface Bounds {
  id: string;
  action: Action;
  timeoutMs: number;
  failMode: 'open' | 'closed';
}

/** What the fail mode decides for a check that could not finish. */
export function failed(bounds: Bounds, why: 'timeout' | 'error'): Decision {
  if (bounds.failMode === 'open') return { verdict: 'pass', failed: why };
  return { verdict: bounds.action === 'flag' ? 'flag' : 'block', failed: why, reason: why === 'timeout' ? 'its check did not answer in time' : 'its check failed' };
}

/** What a failed check's error is called, never its message (an upstream's message may quote the text it was given). */
function codeOf(err: unknown): string {
  if (err instanceof GatewayError) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'error';
}

/** Runs `check` until its deadline; its decision, or the fail mode's. */
export async function bounded(bounds: Bounds, context: CheckContext, check: (signal: AbortSignal) => Promise<Decision>): Promise<Decision> {
  const deadline = new Deadline(bounds.timeoutMs, context.signal);
  let abandon!: (err: unknown) => void;
  const aborted = new Promise<never>((_, reject) => (abandon = reject));
  const onAbort = () => abandon(deadline.signal.reason);
  deadline.signal.addEventListener('abort', onAbort, { once: true });
  try {
    // A check that does not heed its signal is left behind at the deadline, not waited for.
    return await Promise.race([check(deadline.signal), aborted]);
  } catch (err) {
    if (err instanceof GatewayError && err.statusCode === 402) throw err;
    const why = deadline.expired ? 'timeout' : 'error';
    context.log.warn({ guardrail: bounds.id, failed: why, code: codeOf(err) }, `guardrail "${bounds.id}" could not finish its check; failing ${bounds.failMode}`);
    return failed(bounds, why);
  } finally {
    deadline.signal.removeEventListener('abort', onAbort);
    deadline.clear();
  }
}
