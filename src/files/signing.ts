// Signed content URLs: HMAC-SHA256 over (file id, expiry) under a key id, checked in constant time, keys rotated with a grace window.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConfigError, GatewayError } from '../base/errors.js';
import type { Db } from '../store/database.js';
import { getOrInitSetting } from '../store/settings.js';
import type { FilesOptions } from './options.js';

export interface SigningKey {
  id: string;
  secret: Buffer;
  /** Unix milliseconds when the key stopped signing; it verifies until then plus the grace window. */
  retiredAt?: number;
}

export type TokenCheck = 'valid' | 'invalid' | 'expired';

export class InvalidTokenError extends GatewayError {
  constructor(check: Exclude<TokenCheck, 'valid'>) {
    super(
      check === 'expired' ? 'expired_token' : 'invalid_token',
      403,
      'permission_error',
      check === 'expired' ? 'this signed URL has expired; get a fresh one from GET /v1/files/{file_id}' : 'this signed URL is not valid for this file',
    );
  }
}

/** A SHA-256 MAC in unpadded base64url. */
const SIG_CHARS = 43;

export class UrlSigner {
  private readonly signer: SigningKey;
  private readonly byId: Map<string, SigningKey>;

  constructor(
    keys: SigningKey[],
    readonly lifetimeSeconds: number,
    readonly graceSeconds: number,
  ) {
    const signer = keys.find((k) => k.retiredAt === undefined);
    if (!signer) throw new ConfigError(['files.signing.keys: every key is retired; list one without retiredAt to sign with']);
    this.signer = signer;
    this.byId = new Map(keys.map((k) => [k.id, k]));
  }

  /** A token for this file, valid for the configured lifetime from now. */
  sign(fileId: string, now = Date.now()): { token: string; expiresAt: number } {
    const expiresAt = Math.floor(now / 1000) + this.lifetimeSeconds;
    return { token: `${this.signer.id}.${expiresAt}.${mac(this.signer, fileId, expiresAt).toString('base64url')}`, expiresAt };
  }

  /**
   * Never throws on a malformed token: anything that is not a valid, unexpired signature of this file is refused.
   * Exactly one string is valid for a signature: the expiry in plain decimal and the MAC in unpadded base64url,
   * compared as text, so padding, standard-base64 characters or a different final character never pass.
   */
  check(fileId: string, token: string, now = Date.now()): TokenCheck {
    const parts = token.split('.');
    if (parts.length !== 3 || !/^[1-9]\d{0,11}$/.test(parts[1]) || parts[2].length !== SIG_CHARS) return 'invalid';
    const [kid, exp, sig] = parts;
    const key = this.byId.get(kid);
    if (!key || (key.retiredAt !== undefined && now >= key.retiredAt + this.graceSeconds * 1000)) return 'invalid';
    const expiresAt = Number(exp);
    const expected = Buffer.from(mac(key, fileId, expiresAt).toString('base64url'));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return expiresAt * 1000 > now ? 'valid' : 'expired';
  }

  verify(fileId: string, token: string, now = Date.now()): void {
    const result = this.check(fileId, token, now);
    if (result !== 'valid') throw new InvalidTokenError(result);
  }
}

function mac(key: SigningKey, fileId: string, expiresAt: number): Buffer {
  return createHmac('sha256', key.secret).update(`file-content:v1:${key.id}:${fileId}:${expiresAt}`).digest();
}

/** The signer from config, or one over a generated secret kept in the settings table when config lists no key. */
export async function createUrlSigner(options: FilesOptions, db: Db): Promise<UrlSigner> {
  const { signing } = options;
  let keys: SigningKey[] = signing.keys.map((k) => ({ id: k.id, secret: Buffer.from(k.secret, 'utf8'), retiredAt: k.retiredAt ? Date.parse(k.retiredAt) : undefined }));
  if (!keys.length) {
    const secret = await getOrInitSetting(db, 'files.signing.secret', () => randomBytes(32).toString('base64url'));
    keys = [{ id: 'auto', secret: Buffer.from(secret, 'base64url') }];
  }
  return new UrlSigner(keys, signing.urlLifetimeSeconds, signing.graceSeconds);
}
