import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { hangUpAfter, holdingStream } from './kit/streams.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { issueApiKey } from '../src/auth/keys.js';
import type { AuthContext } from '../src/auth/authenticate.js';
import type { Charge, Meter } from '../src/billing/meter.js';
import { startBackgroundJobs } from '../src/jobs.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import type { Services } from '../src/services.js';

const models = `  - id: flat-chat
    upstream: upstream-chat
    kind: chat
    price: { perRequest: 0.01 }
  - id: token-chat
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
`;

let fake: FakeUpstream;
let gw: TestGateway;
let charges: ReturnType<typeof observeCharges>;

/** Wraps the meter so a test can await how each charge first ended instead of polling the ledger. */
function observeCharges(services: Services) {
  const inner = services.meter;
  const ended: string[] = [];
  const waiters: ((how: string) => void)[] = [];
  const report = (how: string) => (waiters.length ? waiters.shift()!(how) : ended.push(how));
  const meter: Meter = {
    resume: (ref) => inner.resume(ref),
    async begin(options) {
      const charge = await inner.begin(options);
      let reported = false;
      const end = (how: string) => {
        if (!reported) report(how);
        reported = true;
      };
      // Reports how the charge first ended: settled with usage, at the reservation, or released (close() releases).
      const observed: Charge = {
        ref: charge.ref,
        get ended() {
          return charge.ended;
        },
        settle: async (s) => {
          const outcome = await charge.settle(s);
          end('settle');
          return outcome;
        },
        settleReserved: async () => {
          const outcome = await charge.settleReserved();
          end('settleReserved');
          return outcome;
        },
        // A release of a charge a settlement already ended (the pipeline closes every charge; a settlement may still be
        // committing) ends nothing: the settlement reports when it lands.
        release: async () => {
          const settled = charge.ended;
          await charge.release();
          if (!settled) end('release');
        },
        renew: (ttlMs) => charge.renew(ttlMs),
        close: () => observed.release(),
      };
      return observed;
    },
  };
  services.meter = meter;
  return { next: () => (ended.length ? Promise.resolve(ended.shift()!) : new Promise<string>((resolve) => waiters.push(resolve))) };
}

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) }, listen: true });
  charges = observeCharges(gw.services);
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const ttlMs = () => (gw.services.config.gateway.billing as { reservationTtlSeconds: number }).reservationTtlSeconds * 1000;
const chat = (key: string, model = 'flat-chat') =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });
const balance = (keyId: string) => gw.services.spend.balance('key', keyId, Date.now());
const authOf = (issued: { id: string }): AuthContext => ({ keyId: issued.id, workspaceId: gw.workspace.id, scopes: [], spendCapMicros: null });
const route = (model: string) => gw.services.config.models.get(model)![0];

/** Streams a chat request over a real socket and hangs up once `until` matches what arrived. */
const streamAndHangUp = (key: string, model: string, until: (text: string) => boolean) =>
  hangUpAfter(`${gw.url}/v1/chat/completions`, { authorization: `Bearer ${key}` }, { model, max_tokens: 16, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] }, until);

const chunk = (extra: Record<string, unknown>) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices: [{ index: 0, delta: { content: 'partial' }, finish_reason: null }], ...extra });

describe('settling charges', () => {
  it('leaves nothing reserved and charges nothing when the upstream answers 500', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 50_000 });
    fake.next({ kind: 'status', status: 500 });
    const res = await chat(key.key);
    expect(res.statusCode).toBe(502);
    expect(await charges.next()).toBe('release');
    expect(await balance(key.id)).toEqual({ spentMicros: 0, reservedMicros: 0 });
    expect(await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string)).toEqual([]);
  });

  it('charges a stream the client abandons what the upstream reported so far', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace);
    holdingStream(fake, [chunk({}), chunk({ choices: [], usage: { prompt_tokens: 40, completion_tokens: 5 } })]);
    const requestId = await streamAndHangUp(key.key, 'token-chat', (text) => text.includes('"usage"'));
    expect(await charges.next()).toBe('settle');
    const [row] = await ledgerForRequest(gw.services.db, requestId);
    // 40 input at 2.0/M + 5 output at 10.0/M = 80 + 50 micro-USD
    expect(row).toMatchObject({ input_tokens: 40, output_tokens: 5, cost_micros: 130 });
    expect(await balance(key.id)).toEqual({ spentMicros: 130, reservedMicros: 0 });
  });

  it('charges the reservation for a stream abandoned before any usage was reported', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace);
    holdingStream(fake, [chunk({})]);
    const requestId = await streamAndHangUp(key.key, 'flat-chat', (text) => text.includes('partial'));
    expect(await charges.next()).toBe('settleReserved');
    expect((await ledgerForRequest(gw.services.db, requestId)).map((r) => r.cost_micros)).toEqual([10_000]);
    expect(await balance(key.id)).toEqual({ spentMicros: 10_000, reservedMicros: 0 });
  });

  it('charges once however often a charge is settled', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace);
    const charge = await gw.services.meter.begin({ auth: authOf(key), route: route('flat-chat'), requestId: 'req_settled_twice', estimateMicros: 10_000 });
    await charge.settle({ costMicros: 7_000 });
    await charge.settle({ costMicros: 7_000 });
    await charge.settleReserved();
    await charge.release();
    expect((await ledgerForRequest(gw.services.db, 'req_settled_twice')).map((r) => r.cost_micros)).toEqual([7_000]);
    expect(await balance(key.id)).toEqual({ spentMicros: 7_000, reservedMicros: 0 });
  });

  it('charges once when the store is asked to settle the same reservation twice', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace);
    const now = Date.now();
    await gw.services.spend.reserve({ id: 'rsv_twice', keyId: key.id, workspaceId: gw.workspace.id, requestId: 'req_twice', amountMicros: 9, now, expiresAt: now + ttlMs() });
    const entry = { request_id: 'req_twice', workspace_id: gw.workspace.id, key_id: key.id, model: 'flat-chat', channel: 'fake', kind: 'chat', input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, units: 1, cost_micros: 9, currency: 'USD', price: '{}', created_at: Math.floor(now / 1000) };
    expect(await gw.services.spend.settle('rsv_twice', entry)).toBe(true);
    expect(await gw.services.spend.settle('rsv_twice', entry)).toBe(false);
    expect(await ledgerForRequest(gw.services.db, 'req_twice')).toHaveLength(1);
    expect(await balance(key.id)).toEqual({ spentMicros: 9, reservedMicros: 0 });
  });

  it('still charges a request that outlived its reservation', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 1_000_000 });
    const charge = await gw.services.meter.begin({ auth: authOf(key), route: route('flat-chat'), requestId: 'req_long', estimateMicros: 10_000 });
    expect(await gw.services.spend.sweep(Date.now() + ttlMs() + 1)).toBe(1);
    await charge.settle({ costMicros: 10_000 });
    expect(await balance(key.id)).toEqual({ spentMicros: 10_000, reservedMicros: 0 });
  });
});

describe('reservations stranded by a crash', () => {
  it('hold budget until they expire, and the sweeper then deletes them', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 10_000 });
    // A process that reserved and then died: nobody will ever settle or release this charge.
    await gw.services.meter.begin({ auth: authOf(key), route: route('flat-chat'), requestId: 'req_crashed', estimateMicros: 10_000 });
    const refused = await chat(key.key);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().error.cap).toMatchObject({ spent: 0, reserved: 0.01 });
    expect(await gw.services.spend.sweep(Date.now() + ttlMs() + 1)).toBe(1);
    expect((await chat(key.key)).statusCode).toBe(200);
    expect(await charges.next()).toBe('settle');
  });

  it('stop counting once expired, even before a sweep, and the registered sweeper job deletes them', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 10_000 });
    const longAgo = Date.now() - 2 * ttlMs();
    await gw.services.spend.reserve({ id: 'rsv_stranded', keyId: key.id, workspaceId: gw.workspace.id, requestId: 'req_stranded', amountMicros: 10_000, now: longAgo, expiresAt: longAgo + ttlMs() });
    expect((await chat(key.key)).statusCode).toBe(200);
    expect(await charges.next()).toBe('settle');
    await startBackgroundJobs(gw.services, gw.app.log);
    const left = await gw.services.db.selectFrom('spend_reservations').select('id').where('id', '=', 'rsv_stranded').execute();
    expect(left).toEqual([]);
  });
});

describe('key lifecycle', () => {
  it('refuses a key on the first request after it is revoked, and reserves nothing for it', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace);
    expect((await chat(key.key)).statusCode).toBe(200);
    expect(await charges.next()).toBe('settle');
    await gw.services.db.updateTable('api_keys').set({ revoked_at: Math.floor(Date.now() / 1000) }).where('id', '=', key.id).execute();
    const res = await chat(key.key);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('revoked_api_key');
    expect(await balance(key.id)).toEqual({ spentMicros: 10_000, reservedMicros: 0 });
  });

  it('refuses a key on the first request after its expiry passes', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { expiresAt: Math.floor(Date.now() / 1000) + 3600 });
    expect((await chat(key.key)).statusCode).toBe(200);
    expect(await charges.next()).toBe('settle');
    // Time passing, without waiting for it: the stored expiry is now in the past.
    await gw.services.db.updateTable('api_keys').set({ expires_at: Math.floor(Date.now() / 1000) - 1 }).where('id', '=', key.id).execute();
    const res = await chat(key.key);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('expired_api_key');
  });
});
