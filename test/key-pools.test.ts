// Key pools (a channel's `credentials`): every key whose variable is set serves, requests spread by weight, and a key the
// upstream refuses (429, 401) rests while the request goes on to the next key, unseen by the client. One gateway, on an
// injected clock; one fake upstream that answers each key as the test scripts it, checked by its Authorization header.
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testClock } from './kit/fake-cloud-auth.js';
import { FakeUpstream, json, type RecordedRequest } from './kit/fake-upstream.js';
import { startGateway, testModels, type TestGateway } from './kit/gateway.js';
import { captureLogs } from './kit/log-capture.js';

const clock = testClock();
const logs = captureLogs('info');

/** What the fake answers a key with: the chat answer, a 401 (revoked), or a 429 with its retry-after. */
type KeyAnswer = 'ok' | 'revoked' | { limited: string };
const answers = new Map<string, KeyAnswer>();
/** Requests the fake received, by the key they carried. */
const seen = new Map<string, RecordedRequest[]>();

const keyOf = (req: RecordedRequest) => String(req.headers.authorization ?? '').replace(/^Bearer /, '');
const served = (key: string) => (seen.get(key) ?? []).length;

let upstream: FakeUpstream;
/** A second region: where the entry with its own baseUrl sends. */
let region: FakeUpstream;
let gw: TestGateway;
let client: OpenAI;

/** A chat channel on the fake whose credentials are the YAML lines given; its model is `<id>-chat`. */
const pooled = (id: string, credentials: string, extra = '') => `id: ${id}
protocol: openai-chat
baseUrl: ${upstream.url}/v1
${extra}credentials:
${credentials}
models:
${testModels.fakeChat.replace(/fake-chat/g, `${id}-chat`)}`;

const env = {
  SPREAD_A: 'sk-spread-a',
  SPREAD_B: 'sk-spread-b',
  SPREAD_C: 'sk-spread-c',
  MIXED_REVOKED: 'sk-mixed-revoked',
  MIXED_LIMITED: 'sk-mixed-limited',
  MIXED_GOOD: 'sk-mixed-good',
  REST_FIRST: 'sk-rest-first',
  REST_SECOND: 'sk-rest-second',
  FULL_A: 'sk-full-a',
  FULL_B: 'sk-full-b',
  GONE_A: 'sk-gone-a',
  GONE_B: 'sk-gone-b',
  REGION_HOME: 'sk-region-home',
  REGION_AWAY: 'sk-region-away',
  TOKENS_CLIENT: 'client-1',
  TOKENS_SECRET: 'client-secret-1',
  TOKENS_KEY: 'sk-tokens-key',
};

beforeAll(async () => {
  upstream = await FakeUpstream.start();
  upstream.route((req, res) => {
    const key = keyOf(req);
    seen.set(key, [...(seen.get(key) ?? []), req]);
    const answer = answers.get(key) ?? 'ok';
    if (answer === 'ok') return false;
    if (answer === 'revoked') json(res, 401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } });
    else json(res, 429, { error: { message: 'Rate limit reached for requests.', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': answer.limited });
    return true;
  });
  region = await FakeUpstream.start();
  gw = await startGateway({
    listen: true,
    channels: {
      spread: pooled('spread', '  - { env: SPREAD_A, weight: 3 }\n  - { env: SPREAD_B, weight: 2 }\n  - { env: SPREAD_C }\n  - { env: SPREAD_UNSET }'),
      // Retries on: a 429 is moved to the next key, not retried on the same one from the budget.
      mixed: pooled('mixed', '  - { env: MIXED_REVOKED }\n  - { env: MIXED_LIMITED }\n  - { env: MIXED_GOOD }', 'retries: { max: 2, minDelayMs: 1, maxDelayMs: 50 }\nbreaker: { failures: 1, coolDownMs: 60000 }\n'),
      rest: pooled('rest', '  - { env: REST_FIRST, weight: 100 }\n  - { env: REST_SECOND }', 'credentialCooldown: { seconds: 20, revokedSeconds: 300 }\n'),
      full: pooled('full', '  - { env: FULL_A }\n  - { env: FULL_B }'),
      regions: pooled('regions', `  - { env: REGION_HOME }\n  - { env: REGION_AWAY, baseUrl: '\${AWAY_URL}/v1' }`),
      tokens: pooled('tokens', '  - { kind: oauth2-client-credentials, tokenUrl: "http://127.0.0.1:9/token", clientIdEnv: TOKENS_CLIENT, clientSecretEnv: TOKENS_SECRET, scope: api }\n  - { env: TOKENS_KEY }'),
      gone: pooled('gone', '  - { env: GONE_A }\n  - { env: GONE_B }', 'credentialCooldown: { revokedSeconds: 120 }\n'),
    },
    env: { ...env, AWAY_URL: region.url },
    overrides: { now: clock.now, upstreamLog: pino({ level: 'info' }, logs.logger.stream as never) },
  });
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
  await region.close();
});
beforeEach(() => {
  region.reset();
  seen.clear();
  answers.clear();
});

const ask = (model: string) => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
const metrics = () => gw.services.metrics.scrape();

describe('a key pool', () => {
  it('spreads requests over its keys by weight, and names the key whose variable is not set', async () => {
    for (let i = 0; i < 60; i++) expect((await ask('spread-chat')).choices[0].message.content).toBe(upstream.chat.text);
    expect([served(env.SPREAD_A), served(env.SPREAD_B), served(env.SPREAD_C)]).toEqual([30, 20, 10]);
    const ready = (await gw.app.inject({ method: 'GET', url: '/readyz' })).json();
    expect(ready.channels.spread).toEqual({ enabled: true, circuit: 'closed', keys: { SPREAD_A: 'serving', SPREAD_B: 'serving', SPREAD_C: 'serving' }, missing: ['SPREAD_UNSET'] });
    expect(await metrics()).toContain('gateway_upstream_key_requests_total{channel="spread",key="SPREAD_A",status="200"} 30');
    expect(gw.services.config.warnings.filter((line) => line.endsWith('channel "spread" serves with 3 of 4 keys; not set: SPREAD_UNSET'))).toHaveLength(1);
  });

  it('sends an entry with its own baseUrl there, with its own key', async () => {
    for (let i = 0; i < 4; i++) await ask('regions-chat');
    expect(served(env.REGION_HOME)).toBe(2);
    expect(region.requests.map((req) => [req.path, req.headers.authorization])).toEqual(Array(2).fill(['/v1/chat/completions', `Bearer ${env.REGION_AWAY}`]));
  });

  it('goes on to the next key when an entry cannot get its access token', async () => {
    for (let i = 0; i < 2; i++) expect((await ask('tokens-chat')).choices[0].message.content).toBe(upstream.chat.text);
    expect(served(env.TOKENS_KEY)).toBe(2);
    expect(await metrics()).toContain('gateway_upstream_key_rests_total{channel="tokens",key="TOKENS_CLIENT",reason="cooling"} 1');
  });

  it('survives a revoked key and a rate-limited key with no error the client sees, and logs the revoked one once without its value', async () => {
    answers.set(env.MIXED_REVOKED, 'revoked').set(env.MIXED_LIMITED, { limited: '30' });
    for (let i = 0; i < 6; i++) expect((await ask('mixed-chat')).choices[0].message.content).toBe(upstream.chat.text);
    const stream = await client.chat.completions.create({ model: 'mixed-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(upstream.chat.text);
    // Each refused key was asked once: then it rested, and the good key served the rest.
    expect([served(env.MIXED_REVOKED), served(env.MIXED_LIMITED), served(env.MIXED_GOOD)]).toEqual([1, 1, 7]);
    // The request that moved reached each key with the same bytes.
    const first = [...seen.values()].map((requests) => requests[0].raw.toString());
    expect(new Set(first).size).toBe(1);
    const revoked = logs.lines.filter((line) => line.key === 'MIXED_REVOKED');
    expect(revoked).toHaveLength(1);
    expect(revoked[0]).toMatchObject({ level: 40, channel: 'mixed', status: 401 });
    expect(JSON.stringify(logs.lines)).not.toContain('sk-mixed');
    // Neither the breaker nor the retry budget counted the refusals as the channel failing.
    const ready = (await gw.app.inject({ method: 'GET', url: '/readyz' })).json();
    expect(ready.channels.mixed).toEqual({ enabled: true, circuit: 'closed', keys: { MIXED_REVOKED: 'revoked', MIXED_LIMITED: 'cooling', MIXED_GOOD: 'serving' } });
    const text2 = await metrics();
    expect(text2).not.toMatch(/gateway_upstream_retries_total\{channel="mixed"\}/);
    expect(text2).toContain('gateway_upstream_key_rests_total{channel="mixed",key="MIXED_REVOKED",reason="revoked"} 1');
    expect(text2).toContain('gateway_upstream_key_resting{channel="mixed",key="MIXED_LIMITED"} 0.5');
    expect(text2).not.toContain('sk-mixed');
  });

  it('gives a rested key its requests again once its retry-after has passed', async () => {
    answers.set(env.REST_FIRST, { limited: '30' });
    await ask('rest-chat');
    expect([served(env.REST_FIRST), served(env.REST_SECOND)]).toEqual([1, 1]);
    answers.clear();
    clock.advance(29_000);
    await ask('rest-chat');
    expect([served(env.REST_FIRST), served(env.REST_SECOND)]).toEqual([1, 2]);
    clock.advance(1_000);
    await ask('rest-chat');
    expect([served(env.REST_FIRST), served(env.REST_SECOND)]).toEqual([2, 2]);
  });

  it('answers the upstream 429 when every key is rate limited, and 503 when every key is revoked', async () => {
    answers.set(env.FULL_A, { limited: '7' }).set(env.FULL_B, { limited: '9' });
    const limited = (await ask('full-chat').catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.headers?.get('retry-after')).toBe('9');
    // Both keys rest: the next request goes to the one back soonest, and the client gets that upstream's own answer.
    expect(await ask('full-chat').catch((err: unknown) => (err as { status: number }).status)).toBe(429);
    expect([served(env.FULL_A), served(env.FULL_B)]).toEqual([2, 1]);

    answers.set(env.GONE_A, 'revoked').set(env.GONE_B, 'revoked');
    const gone = (await ask('gone-chat').catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
    expect(gone).toBeInstanceOf(OpenAI.InternalServerError);
    expect(gone.status).toBe(503);
    expect(gone.headers?.get('retry-after')).toBe('120');
    expect(gone.code).toBe('channel_unavailable');
    // Revoked keys are not asked again until they have rested.
    await ask('gone-chat').catch(() => undefined);
    expect([served(env.GONE_A), served(env.GONE_B)]).toEqual([1, 1]);
    // Rested, a key put right by the operator serves again, and the log says so once.
    answers.clear();
    clock.advance(120_000);
    expect((await ask('gone-chat')).choices[0].message.content).toBe(upstream.chat.text);
    expect(logs.lines.filter((line) => line.channel === 'gone' && /serves again/.test(String(line.msg)))).toHaveLength(1);
  });
});
