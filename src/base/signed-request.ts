// Standard Webhooks signing, for every signed request the gateway sends (webhook deliveries, an http guardrail's checks):
// the `webhook-signature` header, "v1," + base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" under the
// base64-decoded secret ("whsec_" + base64). Receivers verify it with any Standard Webhooks library.
import { createHmac } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** The HMAC key a `whsec_...` secret stands for. */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** One `v1,<base64>` signature per secret, space-delimited (two while a rotated secret is still in its grace period). */
export function webhookSignature(id: string, timestampSeconds: number, body: string, secrets: readonly string[]): string {
  return secrets.map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`).join(' ');
}

/** The headers of one attempt: the same webhook-id every time, this attempt's timestamp, its signature(s). */
export function signedHeaders(id: string, body: string, secrets: readonly string[], now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignature(id, timestamp, body, secrets),
  };
}
