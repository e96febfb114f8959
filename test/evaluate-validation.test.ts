import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installLogprobs } from './kit/fake-evaluate.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;

const models = `  - id: eval-lp
    kind: evaluation
    price: { inputPerMillion: 0.7 }
  - id: chat-model
    kind: chat
    price: { inputPerMillion: 1, outputPerMillion: 2 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  installLogprobs(fake);
  gw = await startGateway({
    channels: {
      judge: chatChannel('judge', `${fake.url}/v1`, { models }),
      locked: chatChannel('locked', `${fake.url}/v1`, { credentialEnv: 'LOCKED_KEY_NOT_SET', models: '  - id: eval-locked\n    kind: evaluation\n    price: { inputPerMillion: 1 }\n' }),
      messages: chatChannel('messages', `${fake.url}/v1`, { protocol: 'anthropic-messages', models: '  - id: eval-nowhere\n    kind: evaluation\n    price: { inputPerMillion: 1 }\n' }),
    },
    env: { LOCKED_KEY_NOT_SET: '' },
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const evaluate = (body: unknown, headers: Record<string, string> = { authorization: `Bearer ${gw.key}` }, url = '/api/v1/evaluate') =>
  gw.app.inject({ method: 'POST', url, headers, payload: body as object });

const valid = { type: 'boolean', instructions: 'Is it fine?' };

/** Sends one bad question beside a valid one and returns the error, checking nothing reached upstream. */
async function refuse(question: unknown) {
  const res = await evaluate({ model: 'eval-lp', state: 's', questions: { good: valid, bad: question } });
  expect(res.statusCode).toBe(400);
  expect(fake.requests).toHaveLength(0);
  return res.json().error as { message: string; param: string; code: string };
}

describe('evaluate request validation', () => {
  it('refuses an unknown question type, naming the question and its field', async () => {
    const error = await refuse({ type: 'rating', instructions: 'x' });
    expect(error.param).toBe('questions.bad.type');
    expect(error.message).toContain('question "bad"');
    expect(error.message).toContain('boolean, noul, choice, score');
  });

  it('refuses a score without 2 to 10 criteria', async () => {
    const few = await refuse({ type: 'score', instructions: 'x', criteria: ['only'] });
    expect(few.param).toBe('questions.bad.criteria');
    expect(few.message).toContain('2 to 10 criteria (got 1)');
    const many = await refuse({ type: 'score', instructions: 'x', criteria: Array.from({ length: 11 }, (_v, i) => `level ${i}`) });
    expect(many.message).toContain('(got 11)');
    expect((await refuse({ type: 'score', instructions: 'x' })).param).toBe('questions.bad.criteria');
  });

  it('refuses a choice without 2 to 20 options', async () => {
    const few = await refuse({ type: 'choice', instructions: 'x', options: { a: 'A' } });
    expect(few.param).toBe('questions.bad.options');
    expect(few.message).toContain('2 to 20 options (got 1)');
    const options = Object.fromEntries(Array.from({ length: 21 }, (_v, i) => [`o${i}`, `Option ${i}`]));
    expect((await refuse({ type: 'choice', instructions: 'x', options })).message).toContain('(got 21)');
  });

  it('refuses a question without instructions, or with a field of another type', async () => {
    expect((await refuse({ type: 'boolean' })).param).toBe('questions.bad.instructions');
    const stray = await refuse({ type: 'boolean', instructions: 'x', options: { a: 'A', b: 'B' } });
    expect(stray.param).toBe('questions.bad.options');
    expect(stray.message).toContain('does not apply to boolean questions');
  });

  it('refuses an empty question map', async () => {
    const res = await evaluate({ model: 'eval-lp', state: 's', questions: {} });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.param).toBe('questions');
    expect(res.json().error.message).toContain('empty');
  });

  it('refuses a missing state or a state that is not a string, object or array', async () => {
    const missing = await evaluate({ model: 'eval-lp', questions: { q: valid } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.message).toContain('"state"');
    expect((await evaluate({ model: 'eval-lp', state: 42, questions: { q: valid } })).statusCode).toBe(400);
  });

  it('refuses a model that is not an enabled evaluation model', async () => {
    const unknown = await evaluate({ model: 'nope', state: 's', questions: { q: valid } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('model_not_found');
    const chat = await evaluate({ model: 'chat-model', state: 's', questions: { q: valid } });
    expect(chat.statusCode).toBe(400);
    expect(chat.json().error.message).toContain('chat model');
    const locked = await evaluate({ model: 'eval-locked', state: 's', questions: { q: valid } });
    expect(locked.statusCode).toBe(400);
    expect(locked.json().error.code).toBe('model_not_enabled');
    expect(locked.json().error.message).toContain('is not configured on this gateway');
    expect(locked.json().error.message).not.toContain('LOCKED_KEY_NOT_SET');
    expect(fake.requests).toHaveLength(0);
  });

  it('answers 503 when the model\'s channel protocol cannot evaluate', async () => {
    const res = await evaluate({ model: 'eval-nowhere', state: 's', questions: { q: valid } });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.message).toContain('declares no evaluate section');
  });

  it('requires the llm.evaluate scope', async () => {
    const key = await gw.newKey({ scopes: ['llm.chat'] });
    const res = await evaluate({ model: 'eval-lp', state: 's', questions: { q: valid } }, { authorization: `Bearer ${key}` });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.param).toBe('llm.evaluate');
    expect((await evaluate({ model: 'eval-lp', state: 's', questions: { q: valid } }, {})).statusCode).toBe(401);
    const scoped = await gw.newKey({ scopes: ['llm.evaluate'] });
    expect((await evaluate({ model: 'eval-lp', state: 's', questions: { q: valid } }, { authorization: `Bearer ${scoped}` })).statusCode).toBe(200);
  });

  it('answers on /v1/evaluate too', async () => {
    const res = await evaluate({ model: 'eval-lp', state: 's', questions: { q: valid } }, { 'x-api-key': gw.key }, '/v1/evaluate');
    expect(res.statusCode).toBe(200);
    expect(res.json().answers.q.type).toBe('boolean');
    expect(res.json().answers.q.probability).toBeCloseTo(0.7, 12);
  });

  it('keeps evaluation models off chat completions', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/chat/completions',
      headers: { authorization: `Bearer ${gw.key}` },
      payload: { model: 'eval-lp', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('evaluation_model_not_supported');
    expect(res.json().error.message).toContain('POST /api/v1/evaluate');
    expect(fake.requests).toHaveLength(0);
  });
});
