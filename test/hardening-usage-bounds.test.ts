// Issue 37 item 2: usage an upstream reports beyond what the model's declared limits allow is impossible: charged the
// reservation and logged, never booked as overage, on every path (chat, Messages, Responses, evaluate, tasks), so a
// capped key is never charged more than its reservation plus an overage the model's limits bound.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installNativeEvaluate, type NativeEvaluateScript } from './kit/fake-evaluate.js';
import { chatChannel, repoRoot, startGateway, type TestGateway } from './kit/gateway.js';
import { installVendorFake, type VendorFixture } from './kit/vendor-fake.js';
import { tasksConfig, waitFor } from './kit/tasks.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

const ABSURD = 1e15;
const CAP = 5_000_000;
/** Context 1,000 and output 100 tokens at 2.0 / 10.0 per million: no honest answer costs more than 0.011 USD. */
const limited = `  - id: small-chat
    upstream: upstream-small
    kind: chat
    limits: { contextTokens: 1000, maxOutputTokens: 100 }
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
`;
const mostMicros = 1000 * 2 + 100 * 10;

let fake: FakeUpstream;
let native: NativeEvaluateScript;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  native = installNativeEvaluate(fake);
  gw = await startGateway({
    channels: {
      fake: chatChannel('fake', `${fake.url}/v1`, { models: limited }),
      claude: chatChannel('claude', `${fake.url}/anthropic`, { protocol: 'anthropic-messages', models: limited.replace('small-chat', 'small-claude') }),
      native: `id: native\nprotocol: evaluate-native\nbaseUrl: ${fake.url}/api/v1\nmodels:\n  - id: small-eval\n    kind: evaluation\n    limits: { contextTokens: 1000, maxOutputTokens: 100 }\n    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }\n`,
    },
  });
  key = await gw.newKey({ spendCapMicros: CAP });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const post = (url: string, payload: object) => gw.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload });

/** The one ledger row of a request: charged at most what the model's limits allow, nothing of it overage. */
async function expectReservationCharged(requestId: string) {
  const rows = await ledgerForRequest(gw.services.db, requestId);
  expect(rows).toHaveLength(1);
  expect(Number(rows[0].overage_micros)).toBe(0);
  expect(Number(rows[0].cost_micros)).toBeGreaterThan(0);
  expect(Number(rows[0].cost_micros)).toBeLessThanOrEqual(mostMicros);
  expect((await gw.services.spend.balance('key', (await keyId()) ?? '', Date.now())).spentMicros).toBeLessThanOrEqual(CAP);
}
const keyId = async () => (await gw.services.db.selectFrom('api_keys').select('id').where('spend_cap_micros', '=', CAP).executeTakeFirst())?.id;

const completion = (usage: object) => ({ id: 'c', object: 'chat.completion', created: 1, model: 'upstream-small', choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' }], usage });

describe('usage beyond the model limits on a capped key', () => {
  it('chat: answers 502 upstream_malformed and charges the reservation, not 10 billion USD', async () => {
    fake.next({ kind: 'json', body: completion({ prompt_tokens: 10, completion_tokens: ABSURD }) });
    const res = await post('/v1/chat/completions', { model: 'small-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_malformed');
    await expectReservationCharged(res.headers['x-request-id'] as string);
  });

  it('chat stream: ends with an error event and charges the reservation', async () => {
    fake.next({
      kind: 'sse',
      events: [
        { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-small', choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] } },
        { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-small', choices: [], usage: { prompt_tokens: 10, completion_tokens: ABSURD } } },
        '[DONE]',
      ],
    });
    const res = await post('/v1/chat/completions', { model: 'small-chat', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.body.split('\n\n').filter(Boolean).at(-1)).toContain('upstream_malformed');
    await expectReservationCharged(res.headers['x-request-id'] as string);
  });

  it('Messages: answers an Anthropic api_error 502 and charges the reservation', async () => {
    fake.next({ kind: 'json', body: { id: 'msg_1', type: 'message', role: 'assistant', model: 'upstream-small', content: [{ type: 'text', text: 'x' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 10, output_tokens: ABSURD } } });
    const res = await post('/v1/messages', { model: 'small-claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.statusCode).toBe(502);
    expect(res.json().type).toBe('error');
    await expectReservationCharged(res.headers['x-request-id'] as string);
  });

  it('Responses: answers 502 upstream_malformed and charges the reservation', async () => {
    fake.next({ kind: 'json', body: { id: 'resp_1', object: 'response', status: 'completed', model: 'upstream-small', output: [], usage: { input_tokens: 10, output_tokens: ABSURD, total_tokens: ABSURD + 10 } } });
    const res = await post('/v1/responses', { model: 'small-chat', max_output_tokens: 16, input: 'hi' });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_malformed');
    await expectReservationCharged(res.headers['x-request-id'] as string);
  });

  it('evaluate: fails with upstream_malformed and charges the reservation', async () => {
    native.usage = () => ({ inputTokens: 10, outputTokens: ABSURD });
    const res = await post('/v1/evaluate', { model: 'small-eval', state: 's', questions: { a: { type: 'boolean', instructions: 'A?' } } });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_malformed');
    await expectReservationCharged(res.headers['x-request-id'] as string);
  });
});

describe('a task whose poll reports impossible usage (a Seedance-shaped task)', () => {
  it('completes with its result archived, charged its reservation (1.50 USD), not 2.5 billion USD', { timeout: 30_000 }, async () => {
    const fixture = parse(readFileSync(join(repoRoot, 'test', 'conformance', 'seedance.yaml'), 'utf8')) as VendorFixture & { poll: { completed: { usage: object } } };
    fixture.poll.completed.usage = { completion_tokens: ABSURD, total_tokens: ABSURD };
    const upstream = await FakeUpstream.start();
    installVendorFake(upstream, fixture);
    const channel = `id: kit\nprotocol: seedance\nbaseUrl: ${upstream.url}${fixture.basePath}\ncredential: { env: KIT_CREDENTIAL }\nmodels:\n  - ${JSON.stringify(fixture.model)}\n`;
    const tasks = await startGateway({ channels: { kit: channel }, env: { KIT_CREDENTIAL: 'kit-key' }, extraConfig: tasksConfig(upstream) });
    try {
      const capped = await tasks.newKey({ spendCapMicros: CAP });
      const created = await tasks.app.inject({ method: 'POST', url: '/api/v1/videos', headers: { authorization: `Bearer ${capped}` }, payload: { model: fixture.model.id, ...fixture.request } });
      expect(created.statusCode, created.body).toBe(200);
      const read = async () => (await tasks.app.inject({ method: 'GET', url: `/api/v1/videos/${created.json().id}`, headers: { authorization: `Bearer ${capped}` } })).json();
      const done = await waitFor(read, (t) => t.status === 'completed' || t.status === 'failed', 20_000);
      // maxOutputTokens 600,000 at 2.5 per million: the reservation, and the most an honest answer could cost.
      expect(done).toMatchObject({ status: 'completed', archive_status: 'archived', cost: { amount: 1.5 } });
      const rows = await tasks.services.db.selectFrom('usage_ledger').selectAll().execute();
      expect(rows.map((r) => [Number(r.cost_micros), Number(r.overage_micros)])).toEqual([[1_500_000, 0]]);
    } finally {
      await tasks.close();
      await upstream.close();
    }
  });
});
