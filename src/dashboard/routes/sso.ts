// Single sign-on for the dashboard: OpenID Connect authorization code flow with PKCE through openid-client. A started
// sign-in is a database row keyed by the SHA-256 of its state, bound to the starting browser by a cookie, taken once;
// the provider's answer must carry that state, a code the provider accepts once, and an ID token for this client with
// this sign-in's nonce. The configured rules then map the verified email (and claims) to workspaces and roles.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type * as Oidc from 'openid-client';
import { GatewayError, RateLimitError } from '../../base/errors.js';
import { importOnUse } from '../../base/load-on-use.js';
import type { DashboardDeps } from '../deps.js';
import { appendAudit } from '../../store/audit.js';
import type { Role } from '../../store/schema.js';
import { findWorkspaceByName } from '../../store/workspaces.js';
import { createUser, findUserByEmail, membershipsOf } from '../../store/users.js';
import { startSession } from '../session.js';

export interface SsoRule {
  emailDomain?: string;
  claim?: { name: string; value: string };
  workspace: string;
  role: Role;
}

export interface SsoConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  label: string;
  scopes: string[];
  allowHttp: boolean;
  rules: SsoRule[];
}

export interface DashboardSignIn {
  passwordSignIn: boolean;
  sso?: SsoConfig;
}

export const signInOptions = (services: DashboardDeps) => ((services.config.gateway.dashboard as DashboardSignIn | undefined) ?? { passwordSignIn: true });

/** A started sign-in lasts this long. */
const LOGIN_SECONDS = 600;
/** Sign-ins started and not finished, at most (each is a row until it is used or expires). */
const MAX_PENDING_LOGINS = 10_000;
const BROWSER_COOKIE = 'gw_sso';
const CALLBACK = '/dashboard/sso/callback';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

class SsoError extends GatewayError {
  constructor(message: string, status = 401) {
    super('sso_failed', status, status === 403 ? 'permission_error' : 'authentication_error', message);
  }
}

/** openid-client (with oauth4webapi and jose), loaded with the first sign-in: a dashboard without single sign-on never holds it. */
const openidClient = importOnUse(() => import('openid-client'), 'openid-client', 'single sign-on');

/** The provider's metadata, read once per process and issuer (again after a failure, or when the config changes it). */
const discovered = new Map<string, Promise<Oidc.Configuration>>();
function providerFor(sso: SsoConfig): Promise<Oidc.Configuration> {
  const cacheKey = JSON.stringify([sso.issuer, sso.clientId, sso.clientSecret, sso.allowHttp]);
  let found = discovered.get(cacheKey);
  if (!found) {
    found = openidClient().then((oidc) => oidc.discovery(new URL(sso.issuer), sso.clientId, sso.clientSecret, undefined, { execute: sso.allowHttp ? [oidc.allowInsecureRequests] : [], timeout: 10 }));
    found.catch(() => discovered.delete(cacheKey));
    discovered.set(cacheKey, found);
  }
  return found;
}

/** The address the provider sends the browser back to: server.publicUrl, or the address this request came in on. */
function redirectUri(services: DashboardDeps, req: FastifyRequest): string {
  const base = services.config.gateway.server.publicUrl || `${req.protocol}://${req.host}`;
  return `${base.replace(/\/+$/, '')}${CALLBACK}`;
}

/** The workspaces and roles the rules give this identity. */
export function rolesFor(rules: SsoRule[], email: string, claims: Record<string, unknown>): Map<string, Role> {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  const granted = new Map<string, Role>();
  const rank: Record<Role, number> = { member: 0, admin: 1, owner: 2 };
  for (const rule of rules) {
    if (rule.emailDomain !== undefined && rule.emailDomain.toLowerCase() !== domain) continue;
    if (rule.claim) {
      const value = claims[rule.claim.name];
      if (!(Array.isArray(value) ? value.includes(rule.claim.value) : value === rule.claim.value)) continue;
    }
    const before = granted.get(rule.workspace);
    if (!before || rank[rule.role] > rank[before]) granted.set(rule.workspace, rule.role);
  }
  return granted;
}

export function registerSsoRoutes(app: FastifyInstance, services: DashboardDeps): void {
  // Every page knows how sign-in is offered (the sign-in page shows the button, hides the password form when off).
  app.addHook('preHandler', async (req, reply) => {
    const options = signInOptions(services);
    reply.locals = { ...reply.locals, passwordSignIn: options.passwordSignIn, sso: options.sso ? { label: options.sso.label } : undefined };
    if (!options.passwordSignIn && req.method === 'POST' && req.routeOptions.url === '/dashboard/login') throw new SsoError('password sign-in is switched off: use single sign-on', 403);
  });
  app.get('/sso/start', async (req, reply) => startSignIn(services, configured(services), req, reply));
  app.get('/sso/callback', async (req, reply) => finishSignIn(services, configured(services), req, reply));
}

function configured(services: DashboardDeps): SsoConfig {
  const sso = signInOptions(services).sso;
  if (!sso) throw new GatewayError('not_found', 404, 'not_found_error', 'single sign-on is not configured');
  return sso;
}

/** Stores a new sign-in (state, nonce, PKCE verifier, browser binding) and sends the browser to the provider. */
async function startSignIn(services: DashboardDeps, sso: SsoConfig, req: FastifyRequest, reply: FastifyReply) {
  const { db } = services;
  const oidc = await openidClient();
  const provider = await providerFor(sso).catch((err: Error) => {
    req.log.error({ err }, 'single sign-on: the provider could not be reached');
    throw new GatewayError('sso_unavailable', 502, 'server_error', 'the sign-in provider could not be reached; try again later');
  });
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const verifier = oidc.randomPKCECodeVerifier();
  const browser = randomBytes(32).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  await db.deleteFrom('sso_logins').where('expires_at', '<=', now).execute();
  // Anyone may start a sign-in, so the rows are bounded: past the limit, wait for some to expire or finish.
  const live = await db.selectFrom('sso_logins').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  if (Number(live.n) >= MAX_PENDING_LOGINS) throw new RateLimitError('too many sign-ins in progress; try again in a minute', 60);
  await db.insertInto('sso_logins').values({ state_hash: sha256(state), browser_hash: sha256(browser), code_verifier: verifier, nonce, expires_at: now + LOGIN_SECONDS }).execute();
  // Lax, not strict: the provider's redirect back is a cross-site navigation, which must carry it.
  reply.setCookie(BROWSER_COOKIE, browser, { path: CALLBACK, httpOnly: true, sameSite: 'lax', secure: services.config.gateway.server.publicUrl.startsWith('https://'), maxAge: LOGIN_SECONDS });
  const url = oidc.buildAuthorizationUrl(provider, {
    redirect_uri: redirectUri(services, req),
    scope: sso.scopes.join(' '),
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return reply.redirect(url.href, 303);
}

/** The provider's answer: the sign-in it ends is taken once, its code exchanged, and the identity mapped to workspaces. */
async function finishSignIn(services: DashboardDeps, sso: SsoConfig, req: FastifyRequest, reply: FastifyReply) {
  const { db } = services;
  const query = req.query as Record<string, unknown>;
  const state = typeof query.state === 'string' && query.state.length <= 256 ? query.state : '';
  const browser = req.cookies[BROWSER_COOKIE] ?? '';
  reply.clearCookie(BROWSER_COOKIE, { path: CALLBACK });
  // Taking the row is the commit point: a state is good once, for the browser that started it, within ten minutes.
  const login = state
    ? await db.deleteFrom('sso_logins').where('state_hash', '=', sha256(state)).where('expires_at', '>', Math.floor(Date.now() / 1000)).returningAll().executeTakeFirst()
    : undefined;
  if (!login || login.browser_hash !== sha256(browser)) return failed(req, reply, 'this sign-in is unknown, expired, already used, or was started in another browser');
  if (typeof query.error === 'string') return failed(req, reply, `the provider refused: ${query.error.slice(0, 64)}`);
  const claims = await exchangeCode(services, sso, req, state, login);
  if (typeof claims === 'string') return failed(req, reply, claims);
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!email || email.length > 254 || claims.email_verified !== true) return failed(req, reply, 'the provider did not report a verified email address', 403);
  const memberships = await grantedMemberships(services, req, sso.rules, email, claims);
  if (!memberships.length) return failed(req, reply, `no sign-in rule admits ${email}`, 403);
  const userId = await applyMemberships(services, req, sso, email, memberships);
  await startSession(services, req, userId);
  req.log.info({ userId }, 'dashboard: signed in with single sign-on');
  // A page of this site, not a redirect: this answer ends a navigation the provider's site started, so a browser keeps
  // the SameSite=Strict session cookie off a redirect that follows it; the page's own navigation is same-site.
  return reply.view('signed-in', { title: 'Signed in', continueTo: '/dashboard/files' });
}

/** The ID token's claims (with userinfo's when it leaves out the email), or why the answer was refused. */
async function exchangeCode(services: DashboardDeps, sso: SsoConfig, req: FastifyRequest, state: string, login: { code_verifier: string; nonce: string }): Promise<Oidc.IDToken | string> {
  const oidc = await openidClient();
  try {
    const provider = await providerFor(sso);
    const current = new URL(redirectUri(services, req));
    current.search = new URL(req.url, 'http://x').search;
    const tokens = await oidc.authorizationCodeGrant(provider, current, { pkceCodeVerifier: login.code_verifier, expectedState: state, expectedNonce: login.nonce, idTokenExpected: true });
    const claims = tokens.claims()!;
    // Providers that keep scope claims out of the ID token answer them at userinfo, for the same subject only.
    if (claims.email === undefined) return { ...(await oidc.fetchUserInfo(provider, tokens.access_token, claims.sub)), ...claims } as Oidc.IDToken;
    return claims;
  } catch (err) {
    // A failed check says which (the "aud" claim, the nonce...) in its cause.
    const cause = (err as Error).cause;
    const detail = err instanceof oidc.ResponseBodyError ? err.error : `${(err as Error).message}${cause instanceof Error ? `: ${cause.message}` : ''}`;
    return `the provider's answer was refused (${String(detail).slice(0, 160)})`;
  }
}

type Grant = { workspaceId: string; role: Role };

/** The existing workspaces (and roles) the rules give this identity; a rule naming a missing workspace is logged. */
async function grantedMemberships(services: DashboardDeps, req: FastifyRequest, rules: SsoRule[], email: string, claims: Record<string, unknown>): Promise<Grant[]> {
  const memberships: Grant[] = [];
  for (const [name, role] of rolesFor(rules, email, claims)) {
    const workspace = await findWorkspaceByName(services.db, name);
    if (workspace) memberships.push({ workspaceId: workspace.id, role });
    else req.log.warn(`single sign-on rule names workspace "${name}", which does not exist`);
  }
  return memberships;
}

/** The user (created when new) gets the granted roles, each change one `user.sso_role` audit row, in one transaction. */
function applyMemberships(services: DashboardDeps, req: FastifyRequest, sso: SsoConfig, email: string, memberships: Grant[]): Promise<string> {
  return services.db.transaction().execute(async (trx) => {
    const user = (await findUserByEmail(trx, email)) ?? (await createUser(trx, email));
    const actor = { kind: 'user' as const, id: user.id, address: req.ip };
    const current = new Map((await membershipsOf(trx, user.id)).map((m) => [m.workspaceId, m.role]));
    for (const { workspaceId, role } of memberships) {
      const before = current.get(workspaceId);
      if (before === role) continue;
      if (before) await trx.updateTable('memberships').set({ role }).where('user_id', '=', user.id).where('workspace_id', '=', workspaceId).execute();
      else await trx.insertInto('memberships').values({ user_id: user.id, workspace_id: workspaceId, role, created_at: Math.floor(Date.now() / 1000) }).execute();
      await appendAudit(trx, actor, { action: 'user.sso_role', workspaceId, targetId: user.id, before: before ? { email, role: before } : null, after: { email, role, issuer: sso.issuer } });
    }
    return user.id;
  });
}

declare module 'fastify' {
  interface FastifyReply {
    /** Values every template sees (@fastify/view merges them into each page's data). */
    locals: Record<string, unknown> | null;
  }
}

function failed(req: FastifyRequest, reply: FastifyReply, reason: string, status = 401) {
  req.log.info({ reason }, 'dashboard: single sign-on refused');
  return reply.code(status).view('error', { title: 'Sign-in failed', status, message: `Single sign-on failed: ${reason}.` });
}
