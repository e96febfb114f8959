// Failed sign-ins, counted per email and per client address in the database (so every replica sees them).
import { sql } from 'kysely';
import type { Db } from '../store/database.js';

export const WINDOW_SECONDS = 15 * 60;
/** Failures allowed in a window before sign-in is refused with 429. */
export const LIMITS = { email: 5, ip: 30 } as const;

type Subject = { kind: keyof typeof LIMITS; value: string };

const subjectKey = (s: Subject) => `${s.kind}:${s.value.slice(0, 320)}`;

/** Seconds until sign-in may be tried again, or 0 when none of the subjects is over its limit. */
export async function signInRetryAfter(db: Db, subjects: Subject[], now = Date.now()): Promise<number> {
  const at = Math.floor(now / 1000);
  const rows = await db.selectFrom('sign_in_failures').selectAll().where('subject', 'in', subjects.map(subjectKey)).execute();
  let wait = 0;
  for (const row of rows) {
    const kind = row.subject.slice(0, row.subject.indexOf(':')) as Subject['kind'];
    const end = Number(row.window_started_at) + WINDOW_SECONDS;
    if (end > at && Number(row.failures) >= LIMITS[kind]) wait = Math.max(wait, end - at);
  }
  return wait;
}

/** Counts one failure against each subject, opening a new window where the old one has ended. */
export async function recordSignInFailure(db: Db, subjects: Subject[], now = Date.now()): Promise<void> {
  const at = Math.floor(now / 1000);
  // Windows that have ended count for nothing: dropping them keeps the table as small as the current attempts.
  await db.deleteFrom('sign_in_failures').where('window_started_at', '<=', at - WINDOW_SECONDS).execute();
  for (const subject of subjects) {
    await db
      .insertInto('sign_in_failures')
      .values({ subject: subjectKey(subject), failures: 1, window_started_at: at })
      .onConflict((oc) =>
        oc.column('subject').doUpdateSet({
          failures: sql`case when sign_in_failures.window_started_at + ${WINDOW_SECONDS} <= ${at} then 1 else sign_in_failures.failures + 1 end`,
          window_started_at: sql`case when sign_in_failures.window_started_at + ${WINDOW_SECONDS} <= ${at} then ${at} else sign_in_failures.window_started_at end`,
        }),
      )
      .execute();
  }
}

export async function clearSignInFailures(db: Db, subject: Subject): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('subject', '=', subjectKey(subject)).execute();
}
