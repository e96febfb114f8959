// Posts an OAuth 2 token request (a form) and reads the access token out of the answer (RFC 6749 section 5.1). What the
// endpoint says on failure is reduced to its status and its `error` code: its description may echo what was sent.
import { request } from '../../net/undici.js';
import { UpstreamError } from '../../base/errors.js';
import { readBoundedText } from '../upstream-text.js';
import type { AccessToken } from './token-cache.js';

/** A token request that has not answered in this long has failed. */
const TOKEN_REQUEST_TIMEOUT_MS = 30_000;

/** Why a token could not be had, in words a client may see (a status and an OAuth error code, never what was sent). */
export class TokenRequestError extends Error {}

/** The typed failure of getting a token for a channel's request: a 502 naming the channel, never the credential. */
export const tokenFailure = (channel: string, why: string) => new UpstreamError(`channel "${channel}" could not get an access token: ${why}`, 502, 'upstream_auth_failed');

/** An OAuth error code as a client may see it (RFC 6749 section 5.2 codes are short ASCII words). */
const errorCode = (answer: unknown) => {
  const code = (answer as { error?: unknown } | null)?.error;
  return typeof code === 'string' && /^[\w.-]{1,64}$/.test(code) ? ` (${code})` : '';
};

export async function requestToken(url: string, form: Record<string, string>, now: () => number): Promise<AccessToken> {
  let status: number;
  let text: string;
  try {
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(TOKEN_REQUEST_TIMEOUT_MS),
    });
    status = response.statusCode;
    text = await readBoundedText(response.body);
  } catch {
    throw new TokenRequestError('its token endpoint is unreachable or did not answer in time');
  }
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  if (status >= 300) throw new TokenRequestError(`the token endpoint answered ${status}${errorCode(answer)}`);
  const { access_token: value, expires_in: expiresIn } = (answer ?? {}) as { access_token?: unknown; expires_in?: unknown };
  // Entra ID's v1 endpoint wrote expires_in as a string; both are seconds from now.
  const seconds = typeof expiresIn === 'string' && /^\d+$/.test(expiresIn) ? Number(expiresIn) : expiresIn;
  if (typeof value !== 'string' || !value || typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new TokenRequestError('the token endpoint answered without an access token and its lifetime');
  }
  return { value, expiresAt: now() + seconds * 1000 };
}
