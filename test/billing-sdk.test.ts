import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway, testModels } from './kit/gateway.js';

const models = testModels.flatChat;

let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) },
    extraConfig: 'rate-limits:\n  perKey:\n    requestsPerMinute: 1\n',
    listen: true,
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

// No retries: the SDK would otherwise wait out retry-after and try again.
const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
const ask = { model: 'flat-chat', max_tokens: 16, messages: [{ role: 'user' as const, content: 'hi' }] };

describe('the openai SDK against billing refusals', () => {
  it('raises APIError with status 402 naming the exhausted cap', async () => {
    const key = await gw.newKey({ spendCapMicros: 0 });
    const err = await openai(key).chat.completions.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const error = err as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(402);
    expect(error.code).toBe('spend_cap_exhausted');
    expect(error.type).toBe('insufficient_quota');
    expect(error.message).toContain('spending cap of this API key is exhausted');
    expect((error.error as { cap: unknown }).cap).toMatchObject({ scope: 'key', amount: 0, spent: 0, reserved: 0, requested: 0.01, currency: 'USD' });
  });

  it('raises APIError 402 for a spent daily budget, with the reset time in x-budget-reset and the message', async () => {
    const key = await gw.newKey({ spendCapMicros: 0, spendCapPeriod: 'daily' });
    const err = await openai(key).chat.completions.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const error = err as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(402);
    const reset = error.headers!.get('x-budget-reset')!;
    expect(reset).toBe(new Date(Math.ceil((Date.now() + 1) / 86_400_000) * 86_400_000).toISOString());
    expect(error.message).toContain(`daily spending cap of this API key is exhausted`);
    expect(error.message).toContain(`it resets at ${reset}`);
  });

  it('raises the 402 before a stream starts', async () => {
    const key = await gw.newKey({ spendCapMicros: 0 });
    const err = await openai(key).chat.completions.create({ ...ask, stream: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
  });

  it('raises RateLimitError with retry-after once the key passes its rate limit', async () => {
    const key = await gw.newKey();
    const client = openai(key);
    expect((await client.chat.completions.create(ask)).choices[0].message.content).toBe('Hello from the fake upstream.');
    const err = await client.chat.completions.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const limited = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.code).toBe('rate_limited');
  });
});
