// How one channel's requests are authenticated, built from its chosen credential (src/config/credentials.ts): a header
// rendered from a static key, a bearer token minted and cached (OAuth 2 client credentials, a Google service account), or
// an AWS Signature Version 4 over the exact bytes sent. The engine asks for headers per request and never branches on a kind.
import { createHash } from 'node:crypto';
import type { Hash } from '@smithy/hash-node';
import type { SignatureV4 } from '@smithy/signature-v4';
import { requireOnUse } from '../../base/load-on-use.js';
import type { ResolvedCredential } from '../../config/credentials.js';
import type { AbortSource } from '../../net/call-abort.js';
import type { ChannelConfig, ProtocolConfig } from '../../config/types.js';
import type { TemplateSet } from '../liquid.js';
import type { AccessToken, TokenCache } from './token-cache.js';
import { requestToken, TokenRequestError, tokenFailure } from './token-endpoint.js';

/** A request as it will go on the wire, for a signature: the body is the final bytes (undefined when there are none). */
export interface OutgoingRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: Buffer;
  /** The request's abort (its deadline): a token fetch is waited for no longer. */
  signal?: AbortSignal | AbortSource;
}

export interface Authenticator {
  /** True when the headers depend on the body: the body must be final bytes (a string or Buffer), signed and sent as they are. */
  readonly signsBody: boolean;
  /** The headers that authenticate this request (a signature replaces none of the request's own; it adds its own). */
  headers(request: OutgoingRequest): Record<string, string> | Promise<Record<string, string>>;
  /** Secrets that exist only at run time (a token held now), to scrub from any text a client or a log sees. */
  liveSecrets(): string[];
}

export interface AuthenticatorContext {
  channel: ChannelConfig;
  /** The credential to authenticate with: the channel's one, or an entry of its key pool; undefined for a keyless channel. */
  credential: ResolvedCredential | undefined;
  protocol: ProtocolConfig;
  templates: TemplateSet;
  /** Unix milliseconds: token lifetimes and signature dates count on it (tests inject theirs). */
  now: () => number;
  /** The token cache of a credential (by its identity), shared by every channel that holds the same credential. */
  tokenCache: (identity: string, fetchToken: () => Promise<AccessToken>) => TokenCache;
}

/** A Google access token lives an hour at most (https://developers.google.com/identity/protocols/oauth2/service-account#jwt-auth). */
const ASSERTION_LIFETIME_S = 3600;
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The channel's authenticator; undefined for a keyless channel (no credential, or a static one with no header to go in). */
export function authenticatorFor(context: AuthenticatorContext): Authenticator | undefined {
  const credential = context.credential;
  if (!credential) return undefined;
  switch (credential.kind) {
    case 'static':
      return staticHeader(context, credential);
    case 'oauth2-client-credentials':
      return bearer(context, credential, identityOf(credential.kind, credential.tokenUrl, credential.clientId, credential.clientSecret, credential.scope), () =>
        requestToken(credential.tokenUrl, { grant_type: 'client_credentials', client_id: credential.clientId, client_secret: credential.clientSecret, scope: credential.scope }, context.now),
      );
    case 'google-service-account':
      return bearer(context, credential, identityOf(credential.kind, credential.tokenUri, credential.clientEmail, credential.privateKeyId ?? '', credential.scope, credential.privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64')), async () => {
        const issuedAt = Math.floor(context.now() / 1000);
        // jose is loaded with the first service-account token: a gateway without such a channel never holds it.
        const { SignJWT } = await import('jose');
        const assertion = await new SignJWT({ scope: credential.scope })
          .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(credential.privateKeyId ? { kid: credential.privateKeyId } : {}) })
          .setIssuer(credential.clientEmail)
          .setAudience(credential.tokenUri)
          .setIssuedAt(issuedAt)
          .setExpirationTime(issuedAt + ASSERTION_LIFETIME_S)
          .sign(credential.privateKey);
        return requestToken(credential.tokenUri, { grant_type: JWT_BEARER_GRANT, assertion }, context.now);
      });
    case 'aws-sigv4':
      return awsSignature(context, credential);
  }
}

/** A key in a header: the credential's own header and value, else its protocol's `auth` (rendered per request: a filter may sign). */
function staticHeader({ protocol, templates }: AuthenticatorContext, credential: Extract<ResolvedCredential, { kind: 'static' }>): Authenticator | undefined {
  const header = credential.header ?? protocol.auth?.header.toLowerCase();
  const value = credential.value ?? protocol.auth?.value;
  if (!header || value === undefined) return undefined;
  const template = templates.get(value);
  const scope = { credential: credential.credential, secret: credential.secret ?? '' };
  return { signsBody: false, headers: () => ({ [header]: template.render(scope) }), liveSecrets: () => [] };
}

/** What makes two credentials the same one (their tokens interchangeable): a digest, so no secret is kept as a map key. */
const identityOf = (...parts: string[]) => createHash('sha256').update(JSON.stringify(parts)).digest('base64url');

/** A token minted by `fetchToken`, cached until shortly before it expires, in the credential's header (`Bearer <token>` unless its value says otherwise). */
function bearer({ channel, templates, tokenCache }: AuthenticatorContext, credential: { header: string; value?: string }, identity: string, fetchToken: () => Promise<AccessToken>): Authenticator {
  const cache = tokenCache(identity, fetchToken);
  const template = credential.value === undefined ? undefined : templates.get(credential.value);
  return {
    signsBody: false,
    async headers({ signal }) {
      let token: string;
      try {
        token = await cache.get(signal);
      } catch (err) {
        // The request's deadline passed (or its client left) while the token was awaited: the call says which.
        if (signal?.aborted) throw err;
        // A fetch another channel of the same credential started fails this channel's request under this channel's name.
        if (err instanceof TokenRequestError) throw tokenFailure(channel.id, err.message);
        throw tokenFailure(channel.id, 'the token request failed');
      }
      return { [credential.header]: template ? template.render({ token }) : `Bearer ${token}` };
    },
    liveSecrets: () => {
      const token = cache.current();
      return token ? [token] : [];
    },
  };
}

/** smithy's signer and hash (about 1 MiB of heap with @smithy/core), loaded with the first aws-sigv4 channel built. */
const smithySigner = requireOnUse<{ SignatureV4: typeof SignatureV4 }>('@smithy/signature-v4', 'an aws-sigv4 credential');
const smithyHash = requireOnUse<{ Hash: typeof Hash }>('@smithy/hash-node', 'an aws-sigv4 credential');

/**
 * AWS Signature Version 4 (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html) with smithy's signer, as
 * the AWS SDKs sign: every header sent is signed (host and x-amz-date among them; x-amz-security-token with a session
 * token), the payload hash is of the exact body bytes, and the already-encoded path is encoded once more in the canonical request.
 */
function awsSignature({ now }: AuthenticatorContext, credential: Extract<ResolvedCredential, { kind: 'aws-sigv4' }>): Authenticator {
  const { SignatureV4 } = smithySigner();
  const { Hash } = smithyHash();
  const signer = new SignatureV4({
    service: credential.service,
    region: credential.region,
    credentials: { accessKeyId: credential.accessKeyId, secretAccessKey: credential.secretAccessKey, sessionToken: credential.sessionToken },
    sha256: Hash.bind(null, 'sha256'),
  });
  return {
    signsBody: true,
    async headers({ method, url, headers, body }) {
      const query: Record<string, string | string[]> = {};
      for (const [name, value] of url.searchParams) {
        const seen = query[name];
        query[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
      }
      const signed = await signer.sign(
        { method, protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined, path: url.pathname, query, headers: { ...headers, host: url.host }, body },
        { signingDate: new Date(now()) },
      );
      return signed.headers;
    },
    liveSecrets: () => [],
  };
}
