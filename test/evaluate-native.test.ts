import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { defaultNativeAnswer, installNativeEvaluate, type NativeEvaluateScript } from './kit/fake-evaluate.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

let fake: FakeUpstream;
let script: NativeEvaluateScript;
let gw: TestGateway;

const channel = (baseUrl: string) => `id: system-one
protocol: evaluate-native
baseUrl: ${baseUrl}
credential:
  env: SYSTEM_ONE_KEY
models:
  - id: eval-native
    upstream: sys-one-v2
    kind: evaluation
    price: { inputPerMillion: 1.5, outputPerMillion: 4 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  script = installNativeEvaluate(fake);
  gw = await startGateway({ channels: { 'system-one': channel(`${fake.url}/api/v1`) }, env: { SYSTEM_ONE_KEY: 'sk-native' } });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  script.answer = (_id, q) => defaultNativeAnswer(q);
  script.usage = (n) => ({ inputTokens: 100 + 10 * n, outputTokens: 3 * n });
});

const evaluate = (body: unknown) =>
  gw.app.inject({ method: 'POST', url: '/api/v1/evaluate', headers: { authorization: `Bearer ${gw.key}` }, payload: body as object });

const allTypes = {
  polite: { type: 'boolean', instructions: 'Is it polite?' },
  spam: { type: 'noul', instructions: 'Is it spam?' },
  topic: { type: 'choice', instructions: 'Which topic?', options: { billing: 'Billing', tech: 'Technical', other: 'Other' } },
  urgency: { type: 'score', instructions: 'How urgent?', criteria: ['low', 'medium', 'high'] },
};

describe('evaluate through a native channel', () => {
  it('passes the request through in one call, sending boolean as noul', async () => {
    const res = await evaluate({ model: 'eval-native', state: { ticket: 'my card was charged twice' }, questions: allTypes });
    expect(res.statusCode).toBe(200);
    expect(fake.requests).toHaveLength(1);
    const sent = fake.last!;
    expect(sent.path).toBe('/api/v1/evaluate');
    expect(sent.headers.authorization).toBe('Bearer sk-native');
    expect(sent.body).toEqual({
      model: 'sys-one-v2',
      state: { ticket: 'my card was charged twice' },
      questions: { ...allTypes, polite: { type: 'noul', instructions: 'Is it polite?' } },
    });
  });

  it('maps every answer back to the client type and shape', async () => {
    const res = await evaluate({ model: 'eval-native', state: 'text', questions: allTypes });
    const body = res.json();
    expect(body.model).toBe('eval-native');
    expect(Object.keys(body.answers)).toEqual(['polite', 'spam', 'topic', 'urgency']);
    expect(body.answers.polite).toEqual({ type: 'boolean', probability: 0.8 });
    expect(body.answers.spam).toEqual({ type: 'noul', noul: 0.8 });
    expect(body.answers.topic.type).toBe('choice');
    expect(body.answers.topic.choice).toBe('billing');
    expect(body.answers.topic.probabilities.billing).toBeCloseTo(0.7, 12);
    expect(body.answers.urgency.type).toBe('score');
    expect(body.answers.urgency.probabilities).toEqual({ '0': 0.25, '1': 0.25, '2': 0.5 });
    // The gateway recomputes the score from the distribution, whatever the upstream said it was.
    expect(body.answers.urgency.score).toBe(1.25);
  });

  it('reports the upstream usage and prices input and output tokens', async () => {
    const res = await evaluate({ model: 'eval-native', state: 'text', questions: allTypes });
    // 140 input at 1.5/M + 12 output at 4/M = 210 + 48 micro-USD
    expect(res.json().usage).toEqual({ inputTokens: 140, outputTokens: 12 });
    expect(res.json().cost).toEqual({ amount: 0.000258, currency: 'USD' });
    const ledger = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
    expect(ledger[0]).toMatchObject({ model: 'eval-native', channel: 'system-one', input_tokens: 140, output_tokens: 12, cost_micros: 258 });
  });

  it('renormalises a choice distribution that does not sum to 1', async () => {
    script.answer = (_id, q) => (q.type === 'choice' ? { type: 'choice', choice: 'tech', probabilities: { billing: 0.2, tech: 0.6 } } : defaultNativeAnswer(q));
    const res = await evaluate({ model: 'eval-native', state: 's', questions: { topic: allTypes.topic } });
    const answer = res.json().answers.topic;
    expect(answer.choice).toBe('tech');
    expect(answer.probabilities.billing).toBeCloseTo(0.25, 12);
    expect(answer.probabilities.tech).toBeCloseTo(0.75, 12);
    expect(answer.probabilities.other).toBe(0);
    expect(Math.abs(answer.probabilities.billing + answer.probabilities.tech - 1)).toBeLessThan(1e-9);
  });

  it('fails naming the question the upstream left unanswered, and still records the usage', async () => {
    script.answer = (id, q) => (id === 'spam' ? undefined : defaultNativeAnswer(q));
    const res = await evaluate({ model: 'eval-native', state: 's', questions: allTypes });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_malformed');
    expect(res.json().error.message).toContain('question "spam"');
    const ledger = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
    expect(ledger[0]).toMatchObject({ input_tokens: 140, output_tokens: 12, cost_micros: 258 });
  });

  it('refuses an answer of the wrong type rather than guessing', async () => {
    script.answer = (_id, q) => (q.type === 'noul' ? { type: 'noul', noul: 1.7 } : defaultNativeAnswer(q));
    const res = await evaluate({ model: 'eval-native', state: 's', questions: { spam: allTypes.spam } });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.message).toContain('"noul" is not a number in [0, 1]');
    // The upstream answered, and said what it spent (one question: 110 input, 3 output tokens): that is charged,
    // though the answer was refused.
    const ledger = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ model: 'eval-native', input_tokens: 110, output_tokens: 3, cost_micros: 177 });
  });

  it('turns an upstream failure into 502 and bills nothing', async () => {
    fake.next({ kind: 'status', status: 500, body: { error: { message: 'native internals' } } });
    const res = await evaluate({ model: 'eval-native', state: 's', questions: allTypes });
    expect(res.statusCode).toBe(502);
    expect(res.body).not.toContain('native internals');
    expect(await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string)).toHaveLength(0);
  });
});
