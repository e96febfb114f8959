// Issue 45 item 1, the families left: a chat, images or evaluate model that declares no `limits` is bounded by
// billing.defaultLimits, widened to what the request itself makes possible (its bytes, the client's output bound, the
// choices or images asked for). An upstream reporting 10^12 tokens on such a model is upstream_malformed: the client gets
// a 502 (an error event on a stream), the reservation is charged, the reason is logged, nothing is booked as overage,
// and a small cap holds. Honest answers, a prompt larger than the default window among them, settle as reported.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installImages, type ImageScript } from './kit/fake-images.js';
import { installNativeEvaluate, type NativeEvaluateScript } from './kit/fake-evaluate.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { captureLogs } from './kit/log-capture.js';

const ABSURD = 1e12;
/** 0.50 USD: 10^12 tokens at any of these prices would cost millions. */
const CAP = 500_000;
const logs = captureLogs('warn');

let fake: FakeUpstream;
let images: ImageScript;
let native: NativeEvaluateScript;
let gw: TestGateway;
let key: string;
let client: OpenAI;

const chatModel = `  - id: open-chat
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
`;
const imagesChannel = (baseUrl: string) => `id: images
protocol: openai-chat
baseUrl: ${baseUrl}
models:
  - id: open-image
    upstream: upstream-image
    kind: image
    media: { maxImages: 4 }
    price: { perImage: 0.01, inputPerMillion: 5.0, outputPerMillion: 40.0 }
`;
const evalChannel = (baseUrl: string) => `id: native
protocol: evaluate-native
baseUrl: ${baseUrl}
models:
  - id: open-eval
    kind: evaluation
    price: { inputPerMillion: 1.0, outputPerMillion: 4.0 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  images = installImages(fake);
  native = installNativeEvaluate(fake);
  const port = new URL(fake.url).port;
  gw = await startGateway({
    channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: chatModel }), images: imagesChannel(`${fake.url}/v1`), native: evalChannel(`${fake.url}/api/v1`) },
    extraConfig: `network:\n  allowHosts: ["127.0.0.1:${port}"]\n`,
    listen: true,
    logger: logs.logger,
  });
  key = await gw.newKey({ spendCapMicros: CAP });
  client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  // Starting a gateway takes longer than the default hook timeout on a busy machine.
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  fake.chat = { text: 'Hello from the fake upstream.', usage: { prompt_tokens: 12, completion_tokens: 7 } };
  images.usage = { input_tokens: 10, output_tokens: 100, total_tokens: 110 };
  native.usage = (n) => ({ inputTokens: 100 + 10 * n, outputTokens: 3 * n });
});

/** The request id of the last request the gateway logged a warning for, or of an SDK error. */
const requestIdOf = (err: unknown) => (err as { headers?: Headers | Record<string, string> }).headers instanceof Headers ? ((err as { headers: Headers }).headers.get('x-request-id') ?? '') : ((err as { headers: Record<string, string> }).headers['x-request-id'] ?? '');

/** One ledger row at the reservation (no overage), the warning naming the default bound, the key's spend within its cap. */
async function expectChargedReservation(requestId: string) {
  expect(requestId).not.toBe('');
  const rows = await ledgerForRequest(gw.services.db, requestId);
  expect(rows).toHaveLength(1);
  expect(Number(rows[0].overage_micros)).toBe(0);
  expect(Number(rows[0].cost_micros)).toBeGreaterThan(0);
  expect(Number(rows[0].cost_micros)).toBeLessThan(CAP);
  const line = await logs.next((l) => l.msg === 'upstream reported impossible usage; charging the reservation, no overage' && l.reservedMicros === Number(rows[0].cost_micros));
  expect(line.reason).toMatch(/usage reports \d+ tokens, more than billing\.defaultLimits \(the model declares no limits\) allow/);
  await expectWithinCap();
}

async function expectWithinCap() {
  const id = (await gw.services.db.selectFrom('api_keys').select('id').where('spend_cap_micros', '=', CAP).executeTakeFirstOrThrow()).id;
  expect((await gw.services.spend.balance('key', id, Date.now())).spentMicros).toBeLessThanOrEqual(CAP);
}

/** Runs `call`, which must fail with a 502 upstream_malformed; its request id. */
async function malformed(call: () => Promise<unknown>): Promise<string> {
  const err = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
  expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_malformed');
  return requestIdOf(err);
}

const completion = (usage: object) => ({ id: 'c', object: 'chat.completion', created: 1, model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' }], usage });

describe('10^12 tokens reported on models without limits, on a key capped at 0.50 USD', () => {
  it('chat: 502 upstream_malformed, charged the reservation, logged', async () => {
    fake.next({ kind: 'json', body: completion({ prompt_tokens: 10, completion_tokens: ABSURD }) });
    const id = await malformed(() => client.chat.completions.create({ model: 'open-chat', messages: [{ role: 'user', content: 'hi' }] }));
    await expectChargedReservation(id);
  });

  it('chat stream: the openai SDK sees the error event, the reservation is charged', async () => {
    fake.next({
      kind: 'sse',
      events: [
        { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] } },
        { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices: [], usage: { prompt_tokens: ABSURD, completion_tokens: 2 } } },
        '[DONE]',
      ],
    });
    const res = await client.chat.completions.create({ model: 'open-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const err = await (async () => {
      for await (const chunk of res.data) void chunk;
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String((err as Error | undefined)?.message)).toMatch(/malformed answer/);
    await expectChargedReservation(res.response.headers.get('x-request-id') ?? '');
  });

  it('images: 502 upstream_malformed, charged the reservation (n images at the priciest), logged', async () => {
    images.usage = { input_tokens: 10, output_tokens: ABSURD, total_tokens: ABSURD + 10 };
    const id = await malformed(() => client.images.generate({ model: 'open-image', prompt: 'a red fox', n: 2 }));
    await expectChargedReservation(id);
  });

  it('evaluate: 502 upstream_malformed, charged the reservation, logged', async () => {
    native.usage = () => ({ inputTokens: ABSURD, outputTokens: 3 });
    const res = await fetch(`${gw.url}/v1/evaluate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'open-eval', state: 's', questions: { a: { type: 'boolean', instructions: 'A?' } } }),
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_malformed');
    await expectChargedReservation(res.headers.get('x-request-id') ?? '');
  });

  it('twenty more of them in a row never take the key past its cap', async () => {
    for (let i = 0; i < 20; i++) {
      fake.next({ kind: 'json', body: completion({ prompt_tokens: ABSURD, completion_tokens: ABSURD }) });
      const status = await client.chat.completions.create({ model: 'open-chat', max_tokens: 50_000, messages: [{ role: 'user', content: 'hi' }] }).then(
        () => 200,
        (e: InstanceType<typeof OpenAI.APIError>) => e.status,
      );
      expect([502, 402]).toContain(status);
    }
    await expectWithinCap();
  });
});

describe('honest answers on models without limits settle as reported', () => {
  const honest = () => gw.newKey({ spendCapMicros: 50_000_000 });

  it('chat: charged the reported tokens, no overage', async () => {
    const own = new OpenAI({ apiKey: await honest(), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const res = await own.chat.completions.create({ model: 'open-chat', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(res.data.choices[0].message.content).toBe('Hello from the fake upstream.');
    const rows = await ledgerForRequest(gw.services.db, res.response.headers.get('x-request-id')!);
    expect(rows.map((r) => [Number(r.cost_micros), Number(r.overage_micros)])).toEqual([[12 * 2 + 7 * 10, 0]]);
  });

  it('chat: a prompt past the default window (300 KB, 150,000 tokens reported) and a long answer the client asked for are not impossible', async () => {
    fake.chat = { text: 'ok', usage: { prompt_tokens: 150_000, completion_tokens: 20_000 } };
    const own = new OpenAI({ apiKey: await honest(), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const res = await own.chat.completions.create({ model: 'open-chat', max_tokens: 20_000, messages: [{ role: 'user', content: 'word '.repeat(60_000) }] }).withResponse();
    expect(res.data.usage).toMatchObject({ prompt_tokens: 150_000, completion_tokens: 20_000 });
    const rows = await ledgerForRequest(gw.services.db, res.response.headers.get('x-request-id')!);
    expect(rows.map((r) => Number(r.cost_micros))).toEqual([150_000 * 2 + 20_000 * 10]);
  });

  it('images: charged per image and the reported tokens (the tokens past the per-image reservation are overage, as before)', async () => {
    const own = new OpenAI({ apiKey: await honest(), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const res = await own.images.generate({ model: 'open-image', prompt: 'a red fox', n: 2 }).withResponse();
    expect(res.data.data).toHaveLength(2);
    const rows = await ledgerForRequest(gw.services.db, res.response.headers.get('x-request-id')!);
    expect(rows.map((r) => [Number(r.cost_micros), Number(r.overage_micros)])).toEqual([[2 * 10_000 + 10 * 5 + 100 * 40, 10 * 5 + 100 * 40]]);
  });

  it('evaluate: charged the reported tokens', async () => {
    const res = await fetch(`${gw.url}/v1/evaluate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await honest()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'open-eval', state: 's', questions: { a: { type: 'boolean', instructions: 'A?' } } }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const rows = await ledgerForRequest(gw.services.db, res.headers.get('x-request-id')!);
    expect(rows.map((r) => Number(r.cost_micros))).toEqual([110 * 1 + 3 * 4]);
  });
});
