// Single sign-on in a real browser (Debian's Chromium through playwright-core) against a real OpenID Connect provider
// (oidc-provider) started here on another site than the gateway's (https, another host: the redirect back is a
// cross-site navigation, as with a real provider): sign-in by rule, and a forged state, a replayed code, an ID token
// for another client and an unverified email each refused; password sign-in switched off.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';
import Provider from 'oidc-provider';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, addUser } from './kit/dashboard.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

/** The provider's address: https on another loopback host, so another site than the gateway's http://127.0.0.1. */
const IDP_HOST = '127.0.0.2';
const CHROMIUM_ARGS = ['--ignore-certificate-errors', '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const GATEWAY_SECRET = randomBytes(24).toString('base64url');
const OTHER_SECRET = randomBytes(24).toString('base64url');
const OTHER_CALLBACK = 'http://127.0.0.1:9/other/callback';

let gw: TestGateway;
let idp: Server;
let issuer: string;
let browser: Browser;
let dispatcher: Dispatcher;
const certDir = mkdtempSync(join(tmpdir(), 'gateway-sso-idp-'));
let handle: (req: IncomingMessage, res: ServerResponse) => void;
/** When set, the provider's token answers carry this ID token instead of their own (a substitution attack). */
let substituteIdToken: string | undefined;
/** When set, changes the provider's redirect back to the gateway (what an attacker controlling the browser's URL can do). */
let tamperCallback: ((url: URL) => void) | undefined;

const ssoConfig = (passwordSignIn: boolean) => `dashboard:
  passwordSignIn: ${passwordSignIn}
  sso:
    issuer: ${issuer}
    clientId: gateway
    clientSecret: ${GATEWAY_SECRET}
    label: Sign in with Example ID
    scopes: [openid, email, groups]
    rules:
      - emailDomain: example.com
        workspace: test
        role: member
      - claim: { name: groups, value: gateway-owners }
        workspace: test
        role: owner
`;

/** A self-signed certificate for the provider's address; the gateway (Node's fetch) trusts it, Chromium is told to. */
function providerCertificate(): { key: Buffer; cert: Buffer } {
  const [key, cert] = [join(certDir, 'key.pem'), join(certDir, 'cert.pem')];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', `/CN=${IDP_HOST}`, '-addext', `subjectAltName=IP:${IDP_HOST}`, '-keyout', key, '-out', cert], { stdio: 'ignore' });
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

beforeAll(async () => {
  const tls = providerCertificate();
  dispatcher = getGlobalDispatcher();
  setGlobalDispatcher(new Agent({ connect: { ca: tls.cert } }));
  idp = createServer(tls, (req, res) => {
    if (tamperCallback) {
      const setHeader = res.setHeader.bind(res);
      res.setHeader = ((name: string, value: string) => {
        if (name.toLowerCase() !== 'location' || !/\/(dashboard\/sso|other)\/callback/.test(String(value))) return setHeader(name, value);
        const url = new URL(String(value));
        tamperCallback!(url);
        return setHeader(name, url.href);
      }) as typeof res.setHeader;
    }
    if (substituteIdToken && req.method === 'POST' && req.url?.startsWith('/token')) {
      const end = res.end.bind(res) as (body: string) => ServerResponse;
      const setHeader = res.setHeader.bind(res);
      res.setHeader = ((name: string, value: string) => (name.toLowerCase() === 'content-length' ? res : setHeader(name, value))) as typeof res.setHeader;
      res.end = ((chunk: Buffer | string) => {
        const body = JSON.parse(String(chunk));
        if (body.id_token) body.id_token = substituteIdToken;
        return end(JSON.stringify(body));
      }) as typeof res.end;
    }
    handle(req, res);
  });
  await new Promise<void>((resolve) => idp.listen(0, IDP_HOST, resolve));
  issuer = `https://${IDP_HOST}:${(idp.address() as AddressInfo).port}`;
  gw = await startGateway({ channels: {}, extraConfig: ssoConfig(true), listen: true });
  const provider = new Provider(issuer, {
    clients: [
      { client_id: 'gateway', client_secret: GATEWAY_SECRET, redirect_uris: [`${gw.url}/dashboard/sso/callback`], grant_types: ['authorization_code'], response_types: ['code'] },
      { client_id: 'other-app', client_secret: OTHER_SECRET, redirect_uris: [OTHER_CALLBACK], grant_types: ['authorization_code'], response_types: ['code'] },
    ],
    // The login typed on the provider's page is the account: its email, verified unless it starts with "unverified".
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({ sub, email: sub, email_verified: !sub.startsWith('unverified'), groups: sub.startsWith('boss') ? ['gateway-owners'] : [] }),
    }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
    scopes: ['openid', 'email', 'groups'],
    cookies: { keys: [randomBytes(16).toString('hex')] },
    features: { devInteractions: { enabled: true } },
  } as never);
  handle = provider.callback() as typeof handle;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await new Promise((resolve) => idp?.close(resolve));
  if (dispatcher) setGlobalDispatcher(dispatcher);
  rmSync(certDir, { recursive: true, force: true });
});

/** Signs in at the provider's own pages (login, then consent), in a fresh browser. */
async function atProvider(page: Page, login: string): Promise<void> {
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** The whole flow from the dashboard's sign-in page; returns the page where the browser ends up. */
async function ssoSignIn(login: string, tamper?: (url: URL) => void): Promise<{ page: Page; status: number; callbackUrl: string }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${gw.url}/dashboard/login`);
  await page.getByRole('link', { name: 'Sign in with Example ID' }).click();
  const answered = page.waitForResponse((res) => new URL(res.url()).pathname === '/dashboard/sso/callback');
  tamperCallback = tamper;
  try {
    await atProvider(page, login);
    const callback = await answered;
    await page.waitForLoadState('load');
    return { page, status: callback.status(), callbackUrl: callback.url() };
  } finally {
    tamperCallback = undefined;
  }
}

async function signedIn(page: Page): Promise<boolean> {
  const res = await page.request.get(`${gw.url}/dashboard/files`, { maxRedirects: 0 });
  return res.status() === 200;
}

const membership = (email: string) =>
  gw.services.db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['memberships.role as role', 'users.password_hash as password_hash'])
    .where('users.email', '=', email)
    .where('memberships.workspace_id', '=', gw.workspace.id)
    .executeTakeFirst();

let usedCallback = '';

describe('single sign-on', () => {
  it('signs a new user in with the role their email domain gives, and an owner by a group claim; each role change is audited', async () => {
    const member = await ssoSignIn('ada@example.com');
    expect(member.status).toBe(200);
    // The browser lands on the files page signed in (not on the sign-in page with the session cookie left unsent).
    await member.page.waitForURL(/\/dashboard\/(files|login)$/);
    expect(new URL(member.page.url()).pathname).toBe('/dashboard/files');
    expect(await member.page.getByRole('heading', { name: 'Files' }).count()).toBe(1);
    expect(await signedIn(member.page)).toBe(true);
    expect(await member.page.getByRole('link', { name: /API keys/ }).count()).toBe(0);
    expect(await membership('ada@example.com')).toEqual({ role: 'member', password_hash: null });
    usedCallback = member.callbackUrl;
    await member.page.context().close();

    const owner = await ssoSignIn('boss@elsewhere.org');
    await owner.page.waitForURL('**/dashboard/files');
    expect(await owner.page.getByRole('link', { name: /API keys/ }).count()).toBe(1);
    expect((await membership('boss@elsewhere.org'))?.role).toBe('owner');
    await owner.page.context().close();

    const rows = await gw.services.db.selectFrom('audit_log').selectAll().where('action', '=', 'user.sso_role').orderBy('id').execute();
    expect(rows.map((r) => JSON.parse(r.after!).role)).toEqual(['member', 'owner']);
    expect(rows.every((r) => r.actor_kind === 'user' && r.address === '127.0.0.1')).toBe(true);
  });

  it('refuses an answer whose state was forged, and signs nobody in', async () => {
    const { page, status } = await ssoSignIn('ada@example.com', (url) => url.searchParams.set('state', 'forged-state-value'));
    expect(status).toBe(401);
    expect(await page.locator('main').textContent()).toContain('this sign-in is unknown, expired, already used, or was started in another browser');
    expect(await signedIn(page)).toBe(false);
    await page.context().close();
  });

  it('refuses an answer replayed as it was, and a used code under a fresh state', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const replay = await page.goto(usedCallback);
    expect(replay!.status()).toBe(401);
    await context.close();

    const usedCode = new URL(usedCallback).searchParams.get('code')!;
    const { page: second, status } = await ssoSignIn('ada@example.com', (url) => url.searchParams.set('code', usedCode));
    expect(status).toBe(401);
    expect(await second.locator('main').textContent()).toContain('invalid_grant');
    expect(await signedIn(second)).toBe(false);
    await second.context().close();
  });

  it("refuses an ID token the provider issued to another client (the provider's own signature, another audience)", async () => {
    // A real ID token for "other-app": its own authorization, code and token exchange at the provider.
    const context = await browser.newContext();
    const page = await context.newPage();
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    let code = '';
    tamperCallback = (url) => {
      code = url.searchParams.get('code') ?? '';
    };
    const auth = new URL(`${issuer}/auth`);
    for (const [k, v] of Object.entries({ client_id: 'other-app', response_type: 'code', scope: 'openid email', redirect_uri: OTHER_CALLBACK, code_challenge: challenge, code_challenge_method: 'S256', state: 'other-state', nonce: 'other-nonce' })) auth.searchParams.set(k, v);
    await page.goto(auth.href);
    await atProvider(page, 'ada@example.com').finally(() => (tamperCallback = undefined));
    await expect.poll(() => code).not.toBe('');
    await context.close();
    const token = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`other-app:${OTHER_SECRET}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: OTHER_CALLBACK, code_verifier: verifier }),
    });
    const idToken = ((await token.json()) as { id_token: string }).id_token;
    expect(JSON.parse(Buffer.from(idToken.split('.')[1], 'base64url').toString()).aud).toBe('other-app');

    substituteIdToken = idToken;
    try {
      const { page: refused, status } = await ssoSignIn('ada@example.com');
      expect(status).toBe(401);
      expect(await refused.locator('main').textContent()).toMatch(/unexpected JWT claim value encountered: .*"aud"/);
      expect(await signedIn(refused)).toBe(false);
      await refused.context().close();
    } finally {
      substituteIdToken = undefined;
    }
  });

  it('refuses an unverified email and an email no rule admits, with 403', async () => {
    const unverified = await ssoSignIn('unverified@example.com');
    expect(unverified.status).toBe(403);
    expect(await unverified.page.locator('main').textContent()).toContain('verified email');
    await unverified.page.context().close();
    const stranger = await ssoSignIn('eve@elsewhere.org');
    expect(stranger.status).toBe(403);
    expect(await stranger.page.locator('main').textContent()).toContain('no sign-in rule admits eve@elsewhere.org');
    expect(await signedIn(stranger.page)).toBe(false);
    await stranger.page.context().close();
  });

  it('keeps password sign-in beside single sign-on, and refuses it once switched off', async () => {
    await addUser(gw.services, 'pw@example.com', [[gw.workspace, 'member']]);
    const client = new DashboardClient(gw.url);
    const page = await client.get('/dashboard/login');
    expect(page.html).toContain('Sign in with Example ID');
    expect(page.html).toContain('name="password"');
    expect((await client.signIn('pw@example.com')).status).toBe(303);

    const file = join(gw.dir, 'config.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('passwordSignIn: true', 'passwordSignIn: false'));
    await gw.services.reload();
    const off = new DashboardClient(gw.url);
    const login = await off.get('/dashboard/login');
    expect(login.html).toContain('Sign in with Example ID');
    expect(login.html).not.toContain('name="password"');
    const refused = await off.signIn('pw@example.com');
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('password sign-in is switched off');
  });
});
