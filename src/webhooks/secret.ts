// Standard Webhooks signing: a per-endpoint secret ("whsec_" + base64 of random bytes, shown to the workspace once) and
// the `webhook-signature` header, "v1," + base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" under the
// base64-decoded secret. The secret is stored as is: the gateway must sign with it, so it cannot keep only a hash (like
// the file-link signing key, it lives in the metadata database; whoever reads that database can sign, as the gateway can).
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
/** 32 bytes: the spec asks for 24 to 64. */
const SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

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
