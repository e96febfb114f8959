// Sign-in attempts, counted in the database (so every replica sees them) before the password is checked: each attempt
// takes its place in a counter with one atomic upsert that returns the count, and an attempt past a limit is refused
// without a verify. However many arrive at once, no more than a limit's worth are ever verified in a window.
//
// Three counters, so a stranger cannot lock the owner out:
// - `pair`: one account from one address, 5 a window. A guesser at an account locks only their own address out of it.
// - `ip`: one address over every account, 30 a window (password spraying).
// - `email`: one account from every address, 50 a window (a guesser with many addresses). A browser that signed in to the
//   account before carries a signed cookie that exempts it from this counter alone, so the owner still signs in.
// A successful sign-in takes its attempts back: the pair and account counters are cleared and its address's count drops by one.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../store/database.js';
import { sessionKey } from './session.js';

export const WINDOW_SECONDS = 15 * 60;
/** Attempts allowed in a window; the next is refused with 429 until the window ends. */
export const LIMITS = { pair: 5, ip: 30, email: 50 } as const;

type Kind = keyof typeof LIMITS;
type Subject = { kind: Kind; value: string };

/** The cookie of a browser that signed in to an account before (path /dashboard/login, 90 days). */
export const KNOWN_COOKIE = 'gw_signin_known';
const KNOWN_SECONDS = 90 * 86_400;

/** Stored hashed: a fixed length, whatever bytes an address or email field carries (PostgreSQL text takes no NUL). */
const subjectKey = (s: Subject) => `${s.kind}:${createHash('sha256').update(s.value).digest('base64url')}`;

async function knownMac(db: Db, email: string): Promise<Buffer> {
  return createHmac('sha256', await sessionKey(db)).update(`known-sign-in\0${email}`).digest();
}

async function isKnownBrowser(db: Db, req: FastifyRequest, email: string): Promise<boolean> {
  const value = (req.cookies as Record<string, string | undefined> | undefined)?.[KNOWN_COOKIE];
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(value)) return false;
  return timingSafeEqual(Buffer.from(value, 'base64url'), await knownMac(db, email));
}

/** Takes one attempt's place in a subject's counter (opening a new window where the old one ended); returns the seconds to wait when it is over the limit. */
async function countAttempt(db: Db, subject: Subject, at: number): Promise<number> {
  const row = await db
    .insertInto('sign_in_failures')
    .values({ subject: subjectKey(subject), failures: 1, window_started_at: at })
    .onConflict((oc) =>
      oc.column('subject').doUpdateSet({
        failures: sql`case when sign_in_failures.window_started_at + ${WINDOW_SECONDS} <= ${at} then 1 else sign_in_failures.failures + 1 end`,
        window_started_at: sql`case when sign_in_failures.window_started_at + ${WINDOW_SECONDS} <= ${at} then ${at} else sign_in_failures.window_started_at end`,
      }),
    )
    .returning(['failures', 'window_started_at'])
    .executeTakeFirstOrThrow();
  return Number(row.failures) > LIMITS[subject.kind] ? Math.max(1, Number(row.window_started_at) + WINDOW_SECONDS - at) : 0;
}

export interface SignInAttempt {
  /** Seconds until this attempt's subjects admit another; 0 when the password may be checked. */
  retryAfter: number;
  subjects: Subject[];
}

/** Counts a sign-in attempt before its password is checked. */
export async function beginSignIn(db: Db, req: FastifyRequest, email: string, now = Date.now()): Promise<SignInAttempt> {
  const at = Math.floor(now / 1000);
  // Windows that have ended count for nothing: dropping them keeps the table as small as the current attempts.
  await db.deleteFrom('sign_in_failures').where('window_started_at', '<=', at - WINDOW_SECONDS).execute();
  const subjects: Subject[] = [
    { kind: 'pair', value: `${req.ip} ${email}` },
    { kind: 'ip', value: req.ip },
  ];
  if (!(await isKnownBrowser(db, req, email))) subjects.push({ kind: 'email', value: email });
  let retryAfter = 0;
  for (const subject of subjects) retryAfter = Math.max(retryAfter, await countAttempt(db, subject, at));
  return { retryAfter, subjects };
}

/** The password was right: the attempt is taken back, and the browser is marked as known to the account. */
export async function signInSucceeded(db: Db, reply: FastifyReply, email: string, attempt: SignInAttempt): Promise<void> {
  for (const subject of attempt.subjects) {
    if (subject.kind === 'ip') {
      await db.updateTable('sign_in_failures').set({ failures: sql`case when failures > 0 then failures - 1 else 0 end` }).where('subject', '=', subjectKey(subject)).execute();
    } else {
      await db.deleteFrom('sign_in_failures').where('subject', '=', subjectKey(subject)).execute();
    }
  }
  reply.setCookie(KNOWN_COOKIE, (await knownMac(db, email)).toString('base64url'), {
    path: '/dashboard/login',
    httpOnly: true,
    sameSite: 'strict',
    secure: 'auto',
    maxAge: KNOWN_SECONDS,
  });
}
