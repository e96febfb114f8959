// Tokens a Responses upstream calls the gateway's MCP server back with (docs/mcp.md, "Responses with gateway MCP
// servers"): an HMAC-SHA256 over (key id, server id, expiry) under a secret generated once and kept in the settings table
// (every worker and replica shares it). A token stands for one key on one server until it expires, never for more: the
// key's scope and grants are checked again on every use, so a revoked key or a removed grant stops it at once.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AuthError } from '../base/errors.js';
import type { Db } from '../store/database.js';
import { getOrInitSetting } from '../store/settings.js';

/** What a relay token starts with: it is never taken for an API key (`sk-gw-...`). */
export const RELAY_TOKEN_PREFIX = 'gwmcp_';
/** A SHA-256 MAC in unpadded base64url. */
const MAC_CHARS = 43;
/** A payload is three short fields: anything longer is not a token of this gateway. */
const MAX_PAYLOAD_CHARS = 512;

interface Payload {
  /** The key the token acts for. */
  k: string;
  /** The one MCP server it may reach. */
  s: string;
  /** Unix seconds it expires at. */
  e: number;
}

const secrets = new WeakMap<Db, Promise<Buffer>>();

function secretOf(db: Db): Promise<Buffer> {
  let secret = secrets.get(db);
  if (!secret) {
    secret = getOrInitSetting(db, 'mcp.relay.secret', () => randomBytes(32).toString('base64url')).then((text) => Buffer.from(text, 'base64url'));
    // A failed read is tried again by the next call, not remembered.
    secret.catch(() => secrets.delete(db));
    secrets.set(db, secret);
  }
  return secret;
}

const macOf = (secret: Buffer, payload: string) => createHmac('sha256', secret).update(`mcp-relay:v1:${payload}`).digest('base64url');

export const isRelayToken = (token: string) => token.startsWith(RELAY_TOKEN_PREFIX);

/** A token for `keyId` on MCP server `server`, valid `seconds` from `now` (Unix milliseconds). */
export async function mintRelayToken(db: Db, keyId: string, server: string, seconds: number, now: number): Promise<string> {
  const payload = Buffer.from(JSON.stringify({ k: keyId, s: server, e: Math.floor(now / 1000) + seconds } satisfies Payload)).toString('base64url');
  return `${RELAY_TOKEN_PREFIX}${payload}.${macOf(await secretOf(db), payload)}`;
}

/**
 * The key a token acts for on `server`; a token that is malformed, signed by another secret, for another server or
 * expired is refused (401), never parsed further than its signature allows.
 */
export async function keyOfRelayToken(db: Db, token: string, server: string | undefined, now: number): Promise<string> {
  const [payload, mac] = token.slice(RELAY_TOKEN_PREFIX.length).split('.');
  if (!payload || !mac || payload.length > MAX_PAYLOAD_CHARS || mac.length !== MAC_CHARS) throw new AuthError('invalid MCP relay token');
  const expected = Buffer.from(macOf(await secretOf(db), payload));
  const given = Buffer.from(mac);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new AuthError('invalid MCP relay token');
  const { k, s, e } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Payload;
  if (e * 1000 <= now) throw new AuthError('this MCP relay token has expired: send the Responses request again', 'expired_api_key');
  if (s !== server) throw new AuthError(`this MCP relay token is for the gateway's MCP server "${s}" only (its URL ends in /mcp/${s})`);
  return k;
}
