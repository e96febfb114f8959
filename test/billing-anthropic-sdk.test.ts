// PENDING: enable by renaming to billing-anthropic-sdk.test.ts once /v1/messages (the messages capability) is merged.
// It needs no other change: the meter and the rate-limit hook apply to every authenticated, billed route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
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

const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
const ask = { model: 'flat-chat', max_tokens: 16, messages: [{ role: 'user' as const, content: 'hi' }] };

describe('the anthropic SDK against billing refusals', () => {
  it('raises PaymentRequiredError with a billing_error naming the exhausted cap', async () => {
    const key = await gw.newKey({ spendCapMicros: 0 });
    const err = await anthropic(key).messages.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.PaymentRequiredError);
    const error = err as InstanceType<typeof Anthropic.PaymentRequiredError>;
    expect(error.status).toBe(402);
    expect(error.type).toBe('billing_error');
    expect(error.apiMessage).toContain('spending cap of this API key is exhausted');
    expect((error.error as { error: { cap: unknown } }).error.cap).toMatchObject({ scope: 'key', amount: 0, requested: 0.01, currency: 'USD' });
  });

  it('raises PaymentRequiredError for a spent monthly budget, with the reset time in x-budget-reset', async () => {
    const key = await gw.newKey({ spendCapMicros: 0, spendCapPeriod: 'monthly' });
    const err = await anthropic(key).messages.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.PaymentRequiredError);
    const error = err as InstanceType<typeof Anthropic.PaymentRequiredError>;
    const today = new Date();
    const nextMonth = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1)).toISOString();
    expect(error.headers.get('x-budget-reset')).toBe(nextMonth);
    expect(error.apiMessage).toContain(`monthly spending cap of this API key is exhausted`);
    expect(error.apiMessage).toContain(`it resets at ${nextMonth}`);
  });

  it('raises RateLimitError with retry-after once the key passes its rate limit', async () => {
    const key = await gw.newKey();
    const client = anthropic(key);
    await client.messages.create(ask);
    const err = await client.messages.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    const limited = err as InstanceType<typeof Anthropic.RateLimitError>;
    expect(limited.type).toBe('rate_limit_error');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
