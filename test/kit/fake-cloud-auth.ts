// Fakes of the cloud platforms' authentication, written from their references and independent of the gateway's code:
// token endpoints that check what they are sent and issue short-lived tokens (Microsoft Entra ID's client-credentials
// grant, Google's JWT-bearer grant for a service account), a gate that lets an upstream request through only with a
// token they issued and that has not expired, and an AWS Signature Version 4 check that recomputes the signature with
// node:crypto from the AWS reference (not with the @smithy signer the gateway uses).
import { createHash, createHmac, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';
import { json, type RecordedRequest } from './fake-http.js';

/** The tests' clock, shared by the gateway (ServiceOverrides.now) and the fakes: tokens expire when a test says so. */
export interface TestClock {
  now: () => number;
  advance(ms: number): void;
}

export function testClock(start = Date.parse('2026-11-26T12:00:00Z')): TestClock {
  let current = start;
  return { now: () => current, advance: (ms) => void (current += ms) };
}

/** What a token endpoint checks: an OAuth error code (RFC 6749 section 5.2) and its status, or undefined to issue a token. */
export type TokenCheck = (form: URLSearchParams) => Promise<{ status: number; error: string } | undefined> | { status: number; error: string } | undefined;

/**
 * An OAuth 2 token endpoint on 127.0.0.1: checks each form it is posted, issues random tokens of `lifetimeSeconds`, and
 * says whether a bearer token it issued is still valid by the shared clock. `hold()` keeps answers back until released.
 */
export class FakeTokenEndpoint {
  /** Every form posted, in order. */
  readonly requests: URLSearchParams[] = [];
  private readonly issued = new Map<string, number>();
  private server!: Server;
  private held?: Promise<void>;
  url = '';
  lifetimeSeconds = 3599;

  private constructor(
    readonly path: string,
    private readonly check: TokenCheck,
    private readonly clock: TestClock,
  ) {}

  static async start(path: string, check: TokenCheck, clock: TestClock): Promise<FakeTokenEndpoint> {
    const fake = new FakeTokenEndpoint(path, check, clock);
    fake.server = createServer((req, res) => void fake.handle(req, res));
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  /** The endpoint's full URL. */
  get tokenUrl(): string {
    return `${this.url}${this.path}`;
  }

  /** Answers nothing until the returned function is called. */
  hold(): () => void {
    let release!: () => void;
    this.held = new Promise((resolve) => (release = resolve));
    return () => {
      this.held = undefined;
      release();
    };
  }

  /** Every token issued so far (to check none leaks). */
  tokens(): string[] {
    return [...this.issued.keys()];
  }

  /** Whether `authorization` is `Bearer <a token this endpoint issued that has not expired>`. */
  accepts(authorization: string | string[] | undefined): boolean {
    const token = typeof authorization === 'string' && authorization.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : undefined;
    const expiresAt = token ? this.issued.get(token) : undefined;
    return expiresAt !== undefined && this.clock.now() < expiresAt;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    this.requests.push(form);
    if (this.held) await this.held;
    if (req.method !== 'POST' || req.url !== this.path || !(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return json(res, 400, { error: 'invalid_request', error_description: `expected a form POST to ${this.path}` });
    }
    const refused = await this.check(form);
    if (refused) return json(res, refused.status, { error: refused.error, error_description: `refused: ${refused.error}; echoing what was sent: ${form.toString()}` });
    const token = `tok-${randomBytes(18).toString('base64url')}`;
    this.issued.set(token, this.clock.now() + this.lifetimeSeconds * 1000);
    json(res, 200, { token_type: 'Bearer', expires_in: this.lifetimeSeconds, access_token: token });
  }
}

/** Microsoft Entra ID's v2.0 token endpoint for a tenant (https://learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow). */
export function entraTokenEndpoint(options: { tenant: string; clientId: string; clientSecret: string; scope: string; clock: TestClock }): Promise<FakeTokenEndpoint> {
  return FakeTokenEndpoint.start(
    `/${options.tenant}/oauth2/v2.0/token`,
    (form) => {
      if (form.get('grant_type') !== 'client_credentials') return { status: 400, error: 'unsupported_grant_type' };
      if (form.get('client_id') !== options.clientId || form.get('client_secret') !== options.clientSecret) return { status: 401, error: 'invalid_client' };
      if (form.get('scope') !== options.scope) return { status: 400, error: 'invalid_scope' };
      return undefined;
    },
    options.clock,
  );
}

/** A Google service account: a fresh RSA key pair and the JSON key file Google's console would give for it. */
export interface ServiceAccount {
  clientEmail: string;
  publicKey: KeyObject;
  /** The key file's JSON, its token_uri pointing at `tokenUri`. */
  keyFile(tokenUri: string): string;
}

export function newServiceAccount(clientEmail = 'gateway@test-project.iam.gserviceaccount.com'): ServiceAccount {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  return {
    clientEmail,
    publicKey,
    keyFile: (tokenUri) =>
      JSON.stringify({ type: 'service_account', project_id: 'test-project', private_key_id: 'key-1', private_key: pem, client_email: clientEmail, client_id: '1234567890', auth_uri: 'https://accounts.google.com/o/oauth2/auth', token_uri: tokenUri }),
  };
}

/**
 * Google's OAuth 2 token endpoint for a service account's JWT-bearer grant
 * (https://developers.google.com/identity/protocols/oauth2/service-account#httprest): the assertion must verify against
 * the account's public key (RS256), name the account as issuer, the endpoint itself as audience, and ask for `scope`.
 */
export async function googleTokenEndpoint(options: { account: ServiceAccount; scope: string; clock: TestClock }): Promise<FakeTokenEndpoint> {
  let endpoint!: FakeTokenEndpoint;
  endpoint = await FakeTokenEndpoint.start(
    '/token',
    async (form) => {
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return { status: 400, error: 'unsupported_grant_type' };
      try {
        const { payload, protectedHeader } = await jwtVerify(form.get('assertion') ?? '', options.account.publicKey, {
          algorithms: ['RS256'],
          issuer: options.account.clientEmail,
          audience: endpoint.tokenUrl,
          currentDate: new Date(options.clock.now()),
          maxTokenAge: '1h',
        });
        if (protectedHeader.kid !== 'key-1' || payload.scope !== options.scope || typeof payload.exp !== 'number' || payload.exp - payload.iat! > 3600) return { status: 400, error: 'invalid_scope' };
      } catch {
        return { status: 400, error: 'invalid_grant' };
      }
      return undefined;
    },
    options.clock,
  );
  return endpoint;
}

/** An upstream route that answers 401 to any request `accepts` refuses (the platform's own check), and lets the rest through. */
export function bearerGate(accepts: (req: RecordedRequest) => boolean, refusals: RecordedRequest[] = []) {
  return (req: RecordedRequest, res: ServerResponse): boolean => {
    if (accepts(req)) return false;
    refusals.push(req);
    json(res, 401, { error: { code: '401', message: 'Access token is missing, invalid, audience is incorrect, or have expired.' } });
    return true;
  };
}

export interface AwsKeys {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  service: string;
}

/** RFC 3986 encoding of everything but the unreserved characters, as SigV4's canonical request wants it. */
const uriEncode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/**
 * Why a request's AWS Signature Version 4 does not hold, or undefined when it does: recomputed from the bytes received
 * as https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html describes (canonical request with the
 * path's segments encoded once more, sorted query, the signed headers' trimmed values, the body's SHA-256; string to
 * sign over the credential scope; the signing key derived from the secret). The date must be within 5 minutes of `now`.
 */
export function sigV4Problem(req: RecordedRequest, keys: AwsKeys, now: number): string | undefined {
  const authorization = req.headers.authorization;
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(typeof authorization === 'string' ? authorization : '');
  if (!match) return 'no AWS4-HMAC-SHA256 authorization header';
  const [, keyId, day, region, service, signedList, signature] = match;
  if (keyId !== keys.accessKeyId) return 'unknown access key id';
  if (region !== keys.region || service !== keys.service) return `credential scope ${region}/${service} is not ${keys.region}/${keys.service}`;
  const amzDate = req.headers['x-amz-date'];
  if (typeof amzDate !== 'string' || !/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== day) return 'no x-amz-date of the credential scope day';
  const signedAt = Date.parse(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
  if (Math.abs(signedAt - now) > 5 * 60_000) return 'signature expired';
  const signed = signedList.split(';');
  for (const required of ['host', 'x-amz-date', ...(keys.sessionToken ? ['x-amz-security-token'] : [])]) if (!signed.includes(required)) return `${required} is not signed`;
  if (keys.sessionToken && req.headers['x-amz-security-token'] !== keys.sessionToken) return 'wrong session token';
  const [rawPath, rawQuery = ''] = req.path.split('?');
  const canonicalUri = rawPath.split('/').map((segment) => uriEncode(segment)).join('/');
  const canonicalQuery = rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair) => pair.split('=').map((part) => uriEncode(decodeURIComponent(part))))
    .sort(([a, av = ''], [b, bv = '']) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v = '']) => `${k}=${v}`)
    .join('&');
  const headerValue = (name: string) => {
    const value = req.headers[name];
    return (Array.isArray(value) ? value.join(',') : (value ?? '')).trim().replace(/\s+/g, ' ');
  };
  const canonicalHeaders = signed.map((name) => `${name}:${headerValue(name)}\n`).join('');
  const canonicalRequest = [req.method, canonicalUri, canonicalQuery, canonicalHeaders, signedList, sha256(req.raw)].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${keys.secretAccessKey}`, day), region), service), 'aws4_request');
  const expected = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
  return expected === signature ? undefined : 'signature does not match';
}

/** An upstream route that answers 403 as AWS does to a request whose signature does not hold. */
export function sigV4Gate(keys: AwsKeys, now: () => number, refusals: string[] = []) {
  return (req: RecordedRequest, res: ServerResponse): boolean => {
    const problem = sigV4Problem(req, keys, now());
    if (!problem) return false;
    refusals.push(problem);
    json(res, 403, { message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.' }, { 'x-amzn-errortype': 'InvalidSignatureException' });
    return true;
  };
}
