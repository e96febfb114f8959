// Signed tokens for providers that want one per request instead of a static key: `{{ credential | jwt_hs256: secret, 1800 }}`.
import { createHmac } from 'node:crypto';

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

export const filters = {
  /** An HS256 JWT issued by `issuer`, valid from 5 s ago for `ttlSeconds`, signed with `secret`. */
  jwt_hs256: (issuer: unknown, secret: unknown, ttlSeconds: unknown = 1800) => {
    if (typeof secret !== 'string' || !secret) throw new Error('jwt_hs256 needs a secret (set the channel\'s credential.secretEnv)');
    const now = Math.floor(Date.now() / 1000);
    const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const payload = base64url(JSON.stringify({ iss: String(issuer), iat: now, nbf: now - 5, exp: now + Number(ttlSeconds) }));
    const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
    return `${header}.${payload}.${signature}`;
  },
};
