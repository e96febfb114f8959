import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { batchGate, installLogprobs, type LogprobScript } from './kit/fake-evaluate.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

let fake: FakeUpstream;
let script: LogprobScript;
let gw: TestGateway;

// Input-only price: 0.7 per million input tokens, nothing for output.
const models = `  - id: eval-lp
    upstream: judge-small
    kind: evaluation
    price: { inputPerMillion: 0.7 }
  - id: eval-wide
    upstream: judge-small
    kind: evaluation
    price: { inputPerMillion: 0.7 }
    evaluation: { concurrency: 20 }
  - id: eval-four
    upstream: judge-small
    kind: evaluation
    price: { inputPerMillion: 0.7 }
    evaluation: { concurrency: 4 }
  - id: chat-model
    kind: chat
    price: { inputPerMillion: 1, outputPerMillion: 2 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  script = installLogprobs(fake);
  gw = await startGateway({ channels: { judge: chatChannel('judge', `${fake.url}/v1`, { models }) } });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  script.byInstruction.clear();
  script.fallback = { top: { Yes: 0.7, No: 0.3 } };
  script.gate = undefined;
});

const evaluate = (body: unknown, key = gw.key) =>
  gw.app.inject({ method: 'POST', url: '/api/v1/evaluate', headers: { authorization: `Bearer ${key}` }, payload: body as object });

const yesNo = (instructions: string, type = 'boolean') => ({ type, instructions });

describe('evaluate through a logprobs channel', () => {
  it('sends one single-token prompt per question with the state first', async () => {
    const res = await evaluate({ model: 'eval-lp', state: { ticket: 'refund please' }, questions: { a: yesNo('Is it polite?'), b: yesNo('Is it angry?') } });
    expect(res.statusCode).toBe(200);
    expect(fake.requests).toHaveLength(2);
    for (const req of fake.requests) {
      expect(req.path).toBe('/v1/chat/completions');
      expect(req.body).toMatchObject({ model: 'judge-small', max_tokens: 1, temperature: 0, logprobs: true, top_logprobs: 20 });
      expect(req.body.messages[0].role).toBe('system');
      expect(req.body.messages[0].content).toContain('{"ticket":"refund please"}');
    }
    // The state message is byte-identical across questions, so upstream prefix caching can reuse it.
    expect(fake.requests[0].body.messages[0]).toEqual(fake.requests[1].body.messages[0]);
    const prompts = fake.requests.map((r) => r.body.messages[1].content).sort();
    expect(prompts[0]).toContain('Is it angry?');
    expect(prompts[1]).toContain('Is it polite?');
  });

  it('sums token variants of a label (Yes, " yes", YES) and renormalises', async () => {
    script.fallback = { top: { Yes: 0.5, ' yes': 0.15, YES: 0.05, No: 0.2, ' no': 0.05, Maybe: 0.05 } };
    const res = await evaluate({ model: 'eval-lp', state: 'text', questions: { b: yesNo('Is it true?'), n: yesNo('Is it true?', 'noul') } });
    expect(res.statusCode).toBe(200);
    const { answers } = res.json();
    // yes 0.70, no 0.25 of 0.95 label mass
    expect(answers.b.type).toBe('boolean');
    expect(answers.b.probability).toBeCloseTo(0.7 / 0.95, 12);
    expect(answers.n).toEqual({ type: 'noul', noul: answers.b.probability });
  });

  it('answers a choice with the most probable option and a distribution over option keys', async () => {
    script.byInstruction.set('Which sentiment?', { top: { A: 0.1, ' b': 0.55, c: 0.2, '\n': 0.15 } });
    const res = await evaluate({
      model: 'eval-lp',
      state: 'I love it',
      questions: { mood: { type: 'choice', instructions: 'Which sentiment?', options: { neg: 'Negative', pos: 'Positive', neu: 'Neutral' } } },
    });
    expect(res.statusCode).toBe(200);
    const answer = res.json().answers.mood;
    expect(answer.type).toBe('choice');
    expect(answer.choice).toBe('pos');
    expect(Object.keys(answer.probabilities)).toEqual(['neg', 'pos', 'neu']);
    expect(answer.probabilities.pos).toBeCloseTo(0.55 / 0.85, 12);
    expect(Math.abs(Object.values<number>(answer.probabilities).reduce((s, p) => s + p, 0) - 1)).toBeLessThan(1e-9);
    const prompt = fake.last!.body.messages[1].content as string;
    expect(prompt).toContain('A: Negative');
    expect(prompt).toContain('B: Positive');
  });

  it('answers a score as the probability-weighted level index with string level keys', async () => {
    script.byInstruction.set('How helpful?', { top: { '0': 0.2, ' 1': 0.3, '2': 0.5 } });
    const res = await evaluate({ model: 'eval-lp', state: ['turn 1', 'turn 2'], questions: { help: { type: 'score', instructions: 'How helpful?', criteria: ['not', 'somewhat', 'very'] } } });
    expect(res.statusCode).toBe(200);
    const answer = res.json().answers.help;
    expect(answer.type).toBe('score');
    expect(Object.keys(answer.probabilities)).toEqual(['0', '1', '2']);
    expect(answer.score).toBeCloseTo(0.3 + 2 * 0.5, 12);
  });

  it('counts a label missing from top_logprobs as zero', async () => {
    script.byInstruction.set('Only yes', { top: { Yes: 0.9, Sure: 0.1 } });
    script.byInstruction.set('Pick', { top: { A: 0.6, B: 0.4 } });
    const res = await evaluate({
      model: 'eval-lp',
      state: 's',
      questions: { y: yesNo('Only yes'), c: { type: 'choice', instructions: 'Pick', options: { x: 'X', y: 'Y', z: 'Z' } } },
    });
    expect(res.statusCode).toBe(200);
    const { answers } = res.json();
    expect(answers.y.probability).toBe(1);
    expect(answers.c.probabilities).toEqual({ x: 0.6, y: 0.4, z: 0 });
  });

  it('fails with insufficient label mass instead of guessing, naming the question', async () => {
    script.byInstruction.set('Vague?', { top: { Maybe: 0.6, Perhaps: 0.1, Yes: 0.2, No: 0.1 } });
    const res = await evaluate({ model: 'eval-lp', state: 's', questions: { ok: yesNo('Fine?'), vague: yesNo('Vague?') } });
    expect(res.statusCode).toBe(502);
    const { error } = res.json();
    expect(error.code).toBe('insufficient_label_mass');
    expect(error.param).toBe('questions.vague');
    expect(error.message).toContain('question "vague"');
    expect(error.message).toContain('30.0%');
  });

  it('fails clearly when the channel returns no logprobs', async () => {
    script.fallback = { noLogprobs: true, top: { Yes: 1 } };
    const res = await evaluate({ model: 'eval-lp', state: 's', questions: { q: yesNo('Anything?') } });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('logprobs_unavailable');
    expect(res.json().error.message).toContain('question "q"');
    expect(res.json().error.message).toContain('no logprobs');
  });

  it('asks 20 questions at once when the model allows 20 in flight', async () => {
    const gate = batchGate(20);
    script.gate = gate.wait;
    const questions = Object.fromEntries(Array.from({ length: 20 }, (_v, i) => [`q${i}`, yesNo(`Question ${i}?`)]));
    const res = await evaluate({ model: 'eval-wide', state: 's', questions });
    expect(res.statusCode).toBe(200);
    expect(gate.maxWaiting).toBe(20);
    const body = res.json();
    expect(Object.keys(body.answers)).toEqual(Object.keys(questions));
    expect(body.usage).toEqual({ inputTokens: 20 * 50, outputTokens: 20 });
  });

  it('keeps at most the per-request limit in flight', async () => {
    // Batches of 4 fill only when 4 calls are in flight at once; the exact bound is pinned in evaluate-limit.test.ts.
    const gate = batchGate(4);
    script.gate = gate.wait;
    const questions = Object.fromEntries(Array.from({ length: 12 }, (_v, i) => [`q${i}`, yesNo(`Question ${i}?`)]));
    const res = await evaluate({ model: 'eval-four', state: 's', questions });
    expect(res.statusCode).toBe(200);
    expect(gate.maxWaiting).toBe(4);
    expect(fake.requests).toHaveLength(12);
  });

  it('refuses 21 questions with 400 before calling upstream', async () => {
    const questions = Object.fromEntries(Array.from({ length: 21 }, (_v, i) => [`q${i}`, yesNo(`Question ${i}?`)]));
    const res = await evaluate({ model: 'eval-wide', state: 's', questions });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('too_many_questions');
    expect(res.json().error.message).toContain('at most 20');
    expect(fake.requests).toHaveLength(0);
  });

  it('bills input tokens only for an input-only model, to the micro-unit', async () => {
    script.fallback = { top: { Yes: 1 }, usage: { prompt_tokens: 1234, completion_tokens: 1 } };
    // A state long enough that an honest upstream's 1234 prompt tokens stay within the reserved worst case.
    const res = await evaluate({ model: 'eval-lp', state: 's'.repeat(3000), questions: { a: yesNo('A?'), b: yesNo('B?'), c: yesNo('C?') } });
    expect(res.statusCode).toBe(200);
    // 3 x 1234 = 3702 input tokens at 0.7 per million = 2591.4 micro-USD, rounded to 2591; output is free.
    expect(res.json().usage).toEqual({ inputTokens: 3702, outputTokens: 3 });
    expect(res.json().cost).toEqual({ amount: 0.002591, currency: 'USD' });
    const ledger = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ model: 'eval-lp', kind: 'evaluation', input_tokens: 3702, output_tokens: 3, cost_micros: 2591 });
  });

  it('fails the request naming the failed question, still recording the tokens already spent', async () => {
    script.fallback = { top: { Yes: 1 }, usage: { prompt_tokens: 1000, completion_tokens: 1 } };
    script.byInstruction.set('Second?', { status: 500 });
    const res = await evaluate({ model: 'eval-lp', state: 's'.repeat(3000), questions: { first: yesNo('First?'), second: yesNo('Second?'), third: yesNo('Third?') } });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.message).toContain('question "second"');
    expect(res.json().error.param).toBe('questions.second');
    expect(res.body).not.toContain('scripted status');
    const ledger = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ input_tokens: 2000, output_tokens: 2, cost_micros: 1400 });
  });
});
