import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    listen: true,
    channels: {
      fake: chatChannel('fake', `${fake.url}/v1`, {
        models: `  - id: fake-chat
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
  - id: fake-eval
    kind: evaluation
    price: { inputPerMillion: 1.0 }
`,
      }),
    },
  });
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

describe('the official openai SDK against the gateway', () => {
  it('creates a chat completion', async () => {
    const completion = await client.chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'Say hello' }] });
    expect(completion.choices[0].message.content).toBe('Hello from the fake upstream.');
    expect(completion.model).toBe('fake-chat');
    expect(completion.usage?.total_tokens).toBe(19);
    expect((completion as unknown as { cost: unknown }).cost).toEqual({ amount: 0.000094, currency: 'USD' });
  });

  it('streams a chat completion, with usage and cost on the final chunk when asked', async () => {
    const stream = await client.chat.completions.create({ model: 'fake-chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Say hello' }] });
    let text = '';
    let last: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      last = chunk;
    }
    expect(text).toBe('Hello from the fake upstream.');
    expect(last).toMatchObject({ usage: { prompt_tokens: 12, completion_tokens: 7 }, cost: { amount: 0.000094, currency: 'USD' } });
  });

  it('lists models', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids.sort()).toEqual(['fake-chat', 'fake-eval']);
  });

  it('raises AuthenticationError (401) for a bad key', async () => {
    const bad = new OpenAI({ apiKey: 'sk-gw-wrong', baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const err = await bad.chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.status).toBe(401);
  });

  it('raises PermissionDeniedError (403) for a key without llm.chat', async () => {
    const limited = new OpenAI({ apiKey: await gw.newKey({ scopes: ['files.write'] }), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const err = await limited.chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(err.status).toBe(403);
  });

  it('raises BadRequestError (400) for an evaluation model, naming the evaluate endpoint', async () => {
    const err = await client.chat.completions.create({ model: 'fake-eval', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.message).toContain('/api/v1/evaluate');
    expect(err.code).toBe('evaluation_model_not_supported');
  });
});
