// A route's `failover.on`, compiled at load into one predicate over the error an attempt failed with: which failures
// move a request on to the next target. What may have run upstream (a timeout, a connection lost after the request
// went out) moves on only when the route lists `timeout`.
import { GatewayError, UpstreamError } from '../base/errors.js';

type Rule = string | number;

/** True when nothing reached the upstream: refused or unreachable before sending, an open circuit, a disabled channel. */
export const nothingSent = (err: unknown): boolean => err instanceof GatewayError && (err.code === 'channel_unavailable' || (err instanceof UpstreamError && err.nothingSent));

function matches(rule: Rule, err: GatewayError): boolean {
  const status = err.upstreamStatus;
  switch (rule) {
    case 'connect':
      return nothingSent(err);
    case 'timeout':
      return err.code === 'upstream_timeout' || err.code === 'upstream_unreachable';
    case '5xx':
      return status !== undefined && status >= 500;
    default:
      if (typeof rule === 'number' || /^\d{3}$/.test(rule)) return status === Number(rule);
      return err.code === rule || err.type === rule || err.anthropicType === rule;
  }
}

/** The predicate of a route's `on` list: true when `err` moves the request on to the next target. */
export function failoverRule(on: readonly Rule[]): (err: unknown) => boolean {
  return (err) => err instanceof GatewayError && on.some((rule) => matches(rule, err));
}
