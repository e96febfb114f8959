// Password hashes with node's scrypt: "scrypt$N$r$p$salt$hash", compared in constant time.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ValidationError } from '../base/errors.js';

const COST = { N: 16384, r: 8, p: 1 };
const KEY_BYTES = 32;
export const MIN_PASSWORD_LENGTH = 12;
/** scrypt reads the whole password: bound it. */
export const MAX_PASSWORD_LENGTH = 256;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_BYTES, { ...options, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))));
}

export function checkNewPassword(password: unknown): string {
  if (typeof password !== 'string' || password.length < MIN_PASSWORD_LENGTH) throw new ValidationError(`the password needs at least ${MIN_PASSWORD_LENGTH} characters`, 'password');
  if (password.length > MAX_PASSWORD_LENGTH) throw new ValidationError(`the password may have at most ${MAX_PASSWORD_LENGTH} characters`, 'password');
  return password;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** A hash any password fails against, so an unknown email costs the same scrypt as a known one. */
const DECOY_HASH = `scrypt$${COST.N}$${COST.r}$${COST.p}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(KEY_BYTES).toString('base64url')}`;

export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const parts = (stored ?? DECOY_HASH).split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt' || password.length > MAX_PASSWORD_LENGTH) return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const expected = Buffer.from(parts[5], 'base64url');
  const key = await derive(password, Buffer.from(parts[4], 'base64url'), { N, r, p });
  return stored !== null && stored !== undefined && key.length === expected.length && timingSafeEqual(key, expected);
}
