// Sign in, sign out, the one-time password page, and choosing the workspace a session looks at.
import type { FastifyInstance } from 'fastify';
import { RateLimitError, ValidationError } from '../../base/errors.js';
import type { DashboardDeps } from '../deps.js';
import { findUserByEmail, findUserById, membershipsOf, normalizeEmail } from '../../store/users.js';
import { passwordLinkFor, usePasswordLink } from '../../auth/password-links.js';
import { checkNewPassword, hashPassword, MAX_PASSWORD_LENGTH, verifyPassword } from '../passwords.js';
import { endSession, requireUser, sessionUser, startSession } from '../session.js';
import { beginSignIn, signInSucceeded } from '../sign-in-limit.js';

const MAX_EMAIL_LENGTH = 254;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

type Form = Record<string, unknown>;
const field = (body: unknown, name: string, max: number) => {
  const value = (body as Form | undefined)?.[name];
  return typeof value === 'string' ? value.slice(0, max + 1) : '';
};

export function registerAuthRoutes(app: FastifyInstance, services: DashboardDeps): void {
  const { db } = services;

  app.get('/login', async (req, reply) => {
    if (await sessionUser(services, req)) return reply.redirect('/dashboard/files', 303);
    return reply.view('login', { title: 'Sign in', csrfToken: reply.generateCsrf(), email: '' });
  });

  app.post('/login', { preHandler: app.csrfProtection }, async (req, reply) => {
    const email = normalizeEmail(field(req.body, 'email', MAX_EMAIL_LENGTH));
    const password = field(req.body, 'password', MAX_PASSWORD_LENGTH);
    // Counted before the password is checked: an attempt past a limit is never verified.
    const attempt = await beginSignIn(db, req, email);
    if (attempt.retryAfter > 0) throw new RateLimitError(`too many sign-in attempts; try again in ${Math.ceil(attempt.retryAfter / 60)} minute(s)`, attempt.retryAfter);
    const user = email.length <= MAX_EMAIL_LENGTH ? await findUserByEmail(db, email) : undefined;
    if (!(await verifyPassword(password, user?.password_hash))) {
      return reply.code(401).view('login', { title: 'Sign in', csrfToken: reply.generateCsrf(), email: email.slice(0, MAX_EMAIL_LENGTH), error: 'Wrong email or password.' });
    }
    await signInSucceeded(db, reply, email, attempt);
    await startSession(services, req, user!.id);
    return reply.redirect('/dashboard/files', 303);
  });

  app.post('/logout', { preHandler: app.csrfProtection }, async (req, reply) => {
    await endSession(services, req);
    return reply.redirect('/dashboard/login', 303);
  });

  app.post('/workspace', { preHandler: [app.csrfProtection, requireUser(services)] }, async (req, reply) => {
    const chosen = field(req.body, 'workspace', 64);
    if (req.dashboard!.memberships.some((m) => m.workspaceId === chosen)) req.session.set('ws', chosen);
    return reply.redirect('/dashboard/files', 303);
  });
  registerSetupRoutes(app, services);
}

/** The one-time password page: a sign-up (first owner, invited member) or a new password for an existing user. */
function registerSetupRoutes(app: FastifyInstance, services: DashboardDeps): void {
  const { db } = services;

  app.get('/setup', async (req, reply) => {
    const { token } = req.query as { token?: string };
    const link = await passwordLinkFor(db, token);
    if (!link) return reply.code(404).view('error', { title: 'Link not valid', status: 404, message: 'This link is not valid: it was used already, has expired or was mistyped. Ask for a new one (npm run admin -- user set-password).' });
    const user = link.user_id ? await findUserById(db, link.user_id) : undefined;
    return reply.view('setup', { title: 'Set your password', csrfToken: reply.generateCsrf(), token, email: user?.email ?? '', signUp: !link.user_id });
  });

  app.post('/setup', { preHandler: app.csrfProtection }, async (req, reply) => {
    const token = field(req.body, 'token', 64);
    const link = await passwordLinkFor(db, token);
    if (!link) return reply.code(404).view('error', { title: 'Link not valid', status: 404, message: 'This link is not valid: it was used already or has expired.' });
    const signUp = !link.user_id;
    const email = normalizeEmail(field(req.body, 'email', MAX_EMAIL_LENGTH));
    const render = (error: string) =>
      reply.code(400).view('setup', { title: 'Set your password', csrfToken: reply.generateCsrf(), token, email: signUp ? email.slice(0, MAX_EMAIL_LENGTH) : '', signUp, error });
    let password: string;
    try {
      password = checkNewPassword(field(req.body, 'password', MAX_PASSWORD_LENGTH));
      if (password !== field(req.body, 'confirm', MAX_PASSWORD_LENGTH)) throw new ValidationError('the two passwords differ', 'confirm');
      if (signUp && (email.length > MAX_EMAIL_LENGTH || !EMAIL.test(email))) throw new ValidationError('enter a valid email address', 'email');
      if (signUp && (await findUserByEmail(db, email))) throw new ValidationError('an account with this email exists already; sign in with it', 'email');
    } catch (err) {
      if (err instanceof ValidationError) return render(`${err.message[0].toUpperCase()}${err.message.slice(1)}.`);
      throw err;
    }
    const hash = await hashPassword(password);
    const userId = await usePasswordLink(db, link, token, { email, passwordHash: hash, address: req.ip });
    if (!userId) return reply.code(404).view('error', { title: 'Link not valid', status: 404, message: 'This link was used already.' });
    await startSession(services, req, userId);
    if (!(await membershipsOf(db, userId)).length) return reply.redirect('/dashboard/login', 303);
    return reply.redirect('/dashboard/files', 303);
  });
}
