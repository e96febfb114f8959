// Issue 27, items 1 and 11: sign-in attempts are counted before the password is checked, so a burst can never have more
// than a limit's worth verified, and a stranger guessing at an account cannot lock its owner out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, PASSWORD, startDashboardGateway } from './kit/dashboard.js';
import type { TestGateway } from './kit/gateway.js';
import { LIMITS } from '../src/dashboard/sign-in-limit.js';

let env: Awaited<ReturnType<typeof startDashboardGateway>>;
let gw: TestGateway;

beforeAll(async () => {
  env = await startDashboardGateway();
  gw = env.gw;
  for (const email of ['burst@example.com', 'race@example.com', 'owner@example.com', 'spread@example.com']) await addUser(gw.services, email, [[gw.workspace, 'owner']]);
});
afterAll(async () => env.close());

interface Browser {
  cookie: string;
  csrf: string;
  address: string;
}

const cookiesOf = (setCookie: string | string[] | undefined) =>
  (Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []).map((line) => line.split(';')[0]).filter((pair) => !pair.endsWith('='));

/** A browser at `address`: the sign-in page's cookie and CSRF token. */
async function browserAt(address: string): Promise<Browser> {
  const page = await gw.app.inject({ method: 'GET', url: '/dashboard/login', remoteAddress: address });
  return { cookie: cookiesOf(page.headers['set-cookie']).join('; '), csrf: /name="_csrf" value="([^"]+)"/.exec(page.body)![1], address };
}

async function signIn(browser: Browser, email: string, password: string) {
  const res = await gw.app.inject({
    method: 'POST',
    url: '/dashboard/login',
    remoteAddress: browser.address,
    headers: { cookie: browser.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: browser.csrf, email, password }).toString(),
  });
  return res;
}

/** Answers 401 (wrong) and 303 (right) mean the password was checked; 429 means it was not. */
const verified = (statuses: number[]) => statuses.filter((s) => s === 401 || s === 303).length;

describe('sign-in attempts under concurrency', () => {
  it('verifies at most the per-account limit of 200 guesses sent at once from one address', { timeout: 60_000 }, async () => {
    const browser = await browserAt('10.1.0.1');
    const statuses = (await Promise.all(Array.from({ length: 200 }, (_, i) => signIn(browser, 'burst@example.com', `wrong guess ${i}`)))).map((r) => r.statusCode);
    expect(verified(statuses)).toBeLessThanOrEqual(LIMITS.pair);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(200 - LIMITS.pair);
  });

  it('verifies at most the limit when 25 wrong and 1 right password arrive at once', { timeout: 60_000 }, async () => {
    const browser = await browserAt('10.1.0.2');
    const guesses = [...Array.from({ length: 25 }, (_, i) => `wrong guess ${i}`), PASSWORD];
    const statuses = (await Promise.all(guesses.map((password) => signIn(browser, 'race@example.com', password)))).map((r) => r.statusCode);
    expect(verified(statuses)).toBeLessThanOrEqual(LIMITS.pair);
  });

  it('verifies at most the per-address limit of 100 sign-ins to 100 accounts sent at once', { timeout: 60_000 }, async () => {
    const browser = await browserAt('10.1.0.3');
    const statuses = (await Promise.all(Array.from({ length: 100 }, (_, i) => signIn(browser, `nobody${i}@example.com`, 'wrong password')))).map((r) => r.statusCode);
    expect(verified(statuses)).toBeLessThanOrEqual(LIMITS.ip);
    const refused = await signIn(browser, 'nobody-else@example.com', 'wrong password');
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('a stranger cannot lock the owner out', () => {
  it('lets the owner sign in from their address after a stranger locked themselves out of the account', async () => {
    const stranger = await browserAt('10.2.0.1');
    for (let i = 0; i < LIMITS.pair + 3; i++) await signIn(stranger, 'owner@example.com', `stranger guess ${i}`);
    expect((await signIn(stranger, 'owner@example.com', PASSWORD)).statusCode).toBe(429);
    const owner = await browserAt('10.2.0.2');
    expect((await signIn(owner, 'owner@example.com', PASSWORD)).statusCode).toBe(303);
  });

  it('caps guesses at an account from many addresses, yet a browser that signed in before still signs in', { timeout: 60_000 }, async () => {
    // The owner signed in once from this browser: it carries the account's known-browser cookie.
    const owner = await browserAt('10.3.0.1');
    const first = await signIn(owner, 'spread@example.com', PASSWORD);
    expect(first.statusCode).toBe(303);
    const known = cookiesOf(first.headers['set-cookie']).find((c) => c.startsWith('gw_signin_known='))!;
    expect(known).toBeDefined();
    // Guessers on 60 addresses, 1 guess each: the account counter stops them at its limit.
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await signIn(await browserAt(`10.4.${i}.1`), 'spread@example.com', `guess ${i}`)).statusCode);
    expect(verified(statuses)).toBeLessThanOrEqual(LIMITS.email);
    expect(statuses.slice(-5)).toEqual([429, 429, 429, 429, 429]);
    // A new browser is refused, the known one is not.
    expect((await signIn(await browserAt('10.3.0.9'), 'spread@example.com', PASSWORD)).statusCode).toBe(429);
    const again = await browserAt('10.3.0.1');
    again.cookie = `${again.cookie}; ${known}`;
    expect((await signIn(again, 'spread@example.com', PASSWORD)).statusCode).toBe(303);
  });

  it('does not take a forged known-browser cookie', async () => {
    const browser = await browserAt('10.3.0.20');
    browser.cookie = `${browser.cookie}; gw_signin_known=${'A'.repeat(43)}`;
    expect((await signIn(browser, 'spread@example.com', PASSWORD)).statusCode).toBe(429);
  });
});
