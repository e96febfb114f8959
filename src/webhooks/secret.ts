// A webhook endpoint's secret: "whsec_" + base64 of random bytes, shown to the workspace once; deliveries are signed with
// it the Standard Webhooks way (src/base/signed-request.ts). The secret is stored as is: the gateway must sign with it,
// so it cannot keep only a hash (like the file-link signing key, it lives in the metadata database; whoever reads that
// database can sign, as the gateway can).
import { randomBytes } from 'node:crypto';
import { SECRET_PREFIX } from '../base/signed-request.js';

export { signedHeaders, webhookSignature } from '../base/signed-request.js';

/** 32 bytes: the spec asks for 24 to 64. */
const SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}
