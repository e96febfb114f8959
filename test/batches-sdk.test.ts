// Batches run by the gateway, through the official SDKs: OpenAI's Batch API (openai) and Anthropic's Message Batches
// (@anthropic-ai/sdk): upload, create, poll (the runner driven tick by tick), read the results, and the money: lines
// billed at batch prices once each, a cap refusing a batch whole, a cancel releasing what the batch held.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { insertEndpoint, newEndpointId } from '../src/webhooks/store.js';

let fake: FakeUpstream;
let gw: TestGateway;
let client: OpenAI;
let anthropic: Anthropic;
/** The gateway's clock: each tick of runToEnd moves it 10 s on (a retried line waits 1 s, then 2 s). */
let clock = Date.now();

/** List price 2 / 10 USD per million input / output tokens; batch price half. */
const models = `  - id: fake-chat
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0, batch: { inputPerMillion: 1.0, outputPerMillion: 5.0 } }
`;

/** A model on an Anthropic-protocol channel: 3 / 15 USD per million, 1.5 / 7.5 in a batch. */
const claudeModels = `  - id: fake-claude
    upstream: upstream-claude
    kind: chat
    price: { inputPerMillion: 3.0, outputPerMillion: 15.0, batch: { inputPerMillion: 1.5, outputPerMillion: 7.5 } }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  // Each answer says which request it answers: the last user message, echoed.
  fake.route((req, res) => {
    if (req.method !== 'POST' || !req.path.endsWith('/chat/completions')) return false;
    const said = req.body.messages.at(-1).content;
    json(res, 200, { id: 'chatcmpl-x', object: 'chat.completion', created: 1, model: req.body.model, choices: [{ index: 0, message: { role: 'assistant', content: `echo ${said}` }, finish_reason: 'stop', logprobs: null }], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
    return true;
  });
  gw = await startGateway({
    channels: {
      fake: chatChannel('fake', `${fake.url}/v1`, { models }),
      claude: chatChannel('claude', `${fake.url}/v1`, { protocol: 'anthropic-messages', models: claudeModels }),
    },
    // The runner is driven by explicit ticks: its own timer never fires within a test.
    extraConfig: 'tasks:\n  tickMilliseconds: 3600000\n  batches: { linesPerTick: 100, inFlightPerChannel: 8, maxLineBytes: 4096 }\n',
    listen: true,
    overrides: { now: () => clock },
  });
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const chatLine = (customId: string, content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model: 'fake-chat', max_tokens: 20, messages: [{ role: 'user', content }] }, ...extra });

async function upload(c: OpenAI, lines: string[]): Promise<string> {
  const file = await c.files.create({ file: await toFile(Buffer.from(lines.join('\n') + '\n'), 'input.jsonl'), purpose: 'batch' });
  return file.id;
}

/** Ticks the runner until the batch ends (each tick runs up to linesPerTick lines per channel). */
async function runToEnd(c: OpenAI, id: string): Promise<OpenAI.Batches.Batch> {
  for (let i = 0; i < 20; i++) {
    clock += 10_000;
    await gw.services.batches.tick();
    const batch = await c.batches.retrieve(id);
    if (['completed', 'failed', 'expired', 'cancelled'].includes(batch.status)) return batch;
  }
  throw new Error('the batch did not end in 20 ticks');
}

async function ledgerOf(batchId: string) {
  await gw.services.spend.commitQueued?.();
  return gw.services.db.selectFrom('usage_ledger').select(['request_id', 'cost_micros']).where('request_id', 'like', `${batchId}:%`).execute();
}

describe('OpenAI batches through the openai SDK', () => {
  it('runs 200 chat lines to completed: 200 results in input order keyed by custom_id, each billed once at the batch price', async () => {
    const ids = Array.from({ length: 200 }, (_, i) => `req-${String(i).padStart(3, '0')}`);
    const fileId = await upload(client, ids.map((id) => chatLine(id, `question ${id}`)));
    const created = await client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { run: 'eval-1' } });
    expect(created).toMatchObject({ object: 'batch', status: 'validating', endpoint: '/v1/chat/completions', input_file_id: fileId, request_counts: { total: 200, completed: 0, failed: 0 }, metadata: { run: 'eval-1' } });

    await gw.services.batches.tick();
    const running = await client.batches.retrieve(created.id);
    expect(running.status).toBe('in_progress');
    expect(running.request_counts).toEqual({ total: 200, completed: 100, failed: 0 });

    const done = await runToEnd(client, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 200, completed: 200, failed: 0 } });
    expect(done.error_file_id ?? null).toBeNull();
    expect(typeof done.completed_at).toBe('number');

    const text = await (await client.files.content(done.output_file_id!)).text();
    const results = text.trim().split('\n').map((l) => JSON.parse(l));
    expect(results.map((r) => r.custom_id)).toEqual(ids);
    for (const r of results) {
      expect(r.response.status_code).toBe(200);
      expect(r.response.body.choices[0].message.content).toBe(`echo question ${r.custom_id}`);
      expect(r.error).toBeNull();
    }
    // 12 input and 7 output tokens at 1 and 5 USD per million: 47 micro-dollars a line, 200 ledger rows.
    const ledger = await ledgerOf(created.id);
    expect(ledger).toHaveLength(200);
    expect(ledger.every((row) => Number(row.cost_micros) === 47)).toBe(true);
    expect((done as unknown as { cost: { amount: number } }).cost.amount).toBeCloseTo(200 * 47e-6, 9);
    const output = await client.files.retrieve(done.output_file_id!);
    expect(output.purpose).toBe('batch_output');
  });

  it('lists the batches newest first', async () => {
    const page = await client.batches.list({ limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.data[0].object).toBe('batch');
  });

  it('refuses malformed JSONL with a 400 naming the line', async () => {
    const fileId = await upload(client, [chatLine('a', 'x'), '{"custom_id": "b", ']);
    const err = await client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('line 2 is not JSON');
  });

  it('refuses a line over the size limit with a 400 naming the line', async () => {
    const fileId = await upload(client, [chatLine('a', 'x'), chatLine('b', 'y'.repeat(5000))]);
    const err = await client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toMatch(/line 2 is \d+ bytes, over the 4096-byte limit/);
  });

  it('refuses an unknown model with a 400 naming the line', async () => {
    const fileId = await upload(client, [chatLine('a', 'x'), chatLine('b', 'y').replace('fake-chat', 'no-such-model')]);
    const err = await client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('line 2: model "no-such-model" does not exist');
  });

  it('refuses a duplicate custom_id with a 400 naming the line', async () => {
    const fileId = await upload(client, [chatLine('a', 'x'), chatLine('a', 'y')]);
    const err = await client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('duplicate_custom_id');
    expect((err as Error).message).toContain('line 2: custom_id "a" is used twice');
  });

  it('refuses a line whose url is not the batch endpoint', async () => {
    const fileId = await upload(client, [chatLine('a', 'x', { url: '/v1/embeddings' })]);
    const err = await client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('line 1: "url" is "/v1/embeddings"');
  });

  it('refuses a batch whose worst case does not fit the key cap with 402, whole: no batch, nothing run', async () => {
    // Worst case of a line: its body bytes of input and 20 output tokens at batch prices, about 1.3e-4 USD; ten lines pass 1e-3.
    const key = await gw.newKey({ spendCapMicros: 1000 });
    const capped = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const fileId = await upload(capped, Array.from({ length: 10 }, (_, i) => chatLine(`c${i}`, 'x')));
    const before = (await gw.services.db.selectFrom('batches').select('id').execute()).length;
    const err = await capped.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((await gw.services.db.selectFrom('batches').select('id').execute()).length).toBe(before);
  });

  it('cancels a batch before it ran: cancelled, every line in the error file, nothing billed, its reservation released', async () => {
    // Room for one batch of six lines under the cap, not two at once.
    const key = await gw.newKey({ spendCapMicros: 1000 });
    const capped = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const fileId = await upload(capped, Array.from({ length: 6 }, (_, i) => chatLine(`k${i}`, 'x')));
    const first = await capped.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const refused = await capped.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((e: unknown) => e);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);

    const cancelling = await capped.batches.cancel(first.id);
    expect(cancelling.status).toBe('cancelling');
    const done = await runToEnd(capped, first.id);
    expect(done).toMatchObject({ status: 'cancelled', request_counts: { total: 6, completed: 0, failed: 0 } });
    expect(done.output_file_id ?? null).toBeNull();
    const errors = (await (await capped.files.content(done.error_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(errors.map((e) => e.error.code)).toEqual(Array(6).fill('batch_cancelled'));
    expect(await ledgerOf(first.id)).toHaveLength(0);

    // What the first batch held is free again: the same batch fits now.
    const second = await capped.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(second.status).toBe('validating');
    await capped.batches.cancel(second.id);
    await runToEnd(capped, second.id);
  });
});

describe('Anthropic Message Batches through @anthropic-ai/sdk', () => {
  it('runs requests to an OpenAI-protocol model and an Anthropic one to ended, results() streaming each in input order, billed at batch prices', async () => {
    const requests = Array.from({ length: 40 }, (_, i) => ({
      custom_id: `m-${i}`,
      params: { model: i % 2 ? 'fake-claude' : 'fake-chat', max_tokens: 20, messages: [{ role: 'user' as const, content: `question m-${i}` }] },
    }));
    const created = await anthropic.messages.batches.create({ requests });
    expect(created).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', results_url: null, request_counts: { processing: 40, succeeded: 0, errored: 0, canceled: 0, expired: 0 } });
    expect(created.id).toMatch(/^msgbatch_/);

    let batch = created;
    for (let i = 0; i < 5 && batch.processing_status !== 'ended'; i++) {
      await gw.services.batches.tick();
      batch = await anthropic.messages.batches.retrieve(created.id);
    }
    expect(batch).toMatchObject({ processing_status: 'ended', request_counts: { processing: 0, succeeded: 40, errored: 0, canceled: 0, expired: 0 } });
    expect(batch.results_url).toBe(`${gw.url}/v1/messages/batches/${created.id}/results`);
    expect(Date.parse(batch.ended_at!)).toBeGreaterThan(0);

    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
    expect(results.map((r) => r.custom_id)).toEqual(requests.map((r) => r.custom_id));
    for (const [i, r] of results.entries()) {
      expect(r.result.type).toBe('succeeded');
      const message = (r.result as Anthropic.Messages.MessageBatchSucceededResult).message;
      expect(message.type).toBe('message');
      // The OpenAI-protocol model's answer came back through the chat -> Messages translation.
      expect(message.content[0]).toMatchObject({ type: 'text', text: i % 2 ? 'Hello from the fake upstream.' : `echo question m-${i}` });
      expect(message.model).toBe(i % 2 ? 'fake-claude' : 'fake-chat');
    }
    // 12 input and 7 output tokens: 47 micro-dollars at fake-chat's batch price, 70.5 (rounded) at fake-claude's.
    const ledger = await ledgerOf(created.id);
    expect(ledger).toHaveLength(40);
    const costs = ledger.map((row) => Number(row.cost_micros)).sort((a, b) => a - b);
    expect(new Set(costs)).toEqual(new Set([47, Math.round(12 * 1.5 + 7 * 7.5)]));

    const listed = await anthropic.messages.batches.list({ limit: 5 });
    expect(listed.data.map((b) => b.id)).toContain(created.id);
  });

  it('refuses a duplicate custom_id with a 400 in the Anthropic error shape', async () => {
    const params = { model: 'fake-chat', max_tokens: 5, messages: [{ role: 'user' as const, content: 'x' }] };
    const err = await anthropic.messages.batches.create({ requests: [{ custom_id: 'a', params }, { custom_id: 'a', params }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (err as InstanceType<typeof Anthropic.BadRequestError>).error as { type: string; error: { type: string; message: string } };
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(body.error.message).toContain('requests[1]: custom_id "a" is used twice');
  });

  it('cancels a Message Batch: ended with every request canceled in its results', async () => {
    const params = { model: 'fake-chat', max_tokens: 5, messages: [{ role: 'user' as const, content: 'x' }] };
    const created = await anthropic.messages.batches.create({ requests: [{ custom_id: 'c1', params }, { custom_id: 'c2', params }] });
    expect((await anthropic.messages.batches.cancel(created.id)).processing_status).toBe('canceling');
    await gw.services.batches.tick();
    const ended = await anthropic.messages.batches.retrieve(created.id);
    expect(ended).toMatchObject({ processing_status: 'ended', request_counts: { canceled: 2, succeeded: 0 } });
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
    expect(results.map((r) => r.result.type)).toEqual(['canceled', 'canceled']);
  });
});

describe('batches surviving a crash, and their webhook', () => {
  it('bills a line once when the process died after its charge settled and before its line was written', async () => {
    const fileId = await upload(client, [chatLine('x0', 'first'), chatLine('x1', 'second'), chatLine('x2', 'third')]);
    const created = await client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await runToEnd(client, created.id);
    const before = fake.requests.length;
    // The crash window: line 1's charge is in the ledger, but its state and the batch's count (one transaction) never landed.
    const { db } = gw.services;
    await db.updateTable('batch_lines').set({ status: 'pending', result: null, cost_micros: 0 }).where('batch_id', '=', created.id).where('line', '=', 1).execute();
    await db.updateTable('batches').set({ status: 'in_progress', succeeded: 2, cost_micros: 94, completed_at: null, output_file_id: null }).where('id', '=', created.id).execute();

    const done = await runToEnd(client, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 3, failed: 0 } });
    // The line ran again upstream, and its charge, under the same id, was written once.
    expect(fake.requests.length).toBe(before + 1);
    const ledger = await ledgerOf(created.id);
    expect(ledger.map((row) => row.request_id).sort()).toEqual([`${created.id}:0`, `${created.id}:1`, `${created.id}:2`]);
    const output = (await (await client.files.content(done.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(output.map((r) => r.custom_id)).toEqual(['x0', 'x1', 'x2']);
  });

  it('sends batch.completed to the workspace webhooks, in the transaction of the final status', async () => {
    await insertEndpoint(gw.services.db, { id: newEndpointId(), workspace_id: gw.workspace.id, url: 'http://127.0.0.1:9/hook', secret: 'whsec_dGVzdA==', previous_secret: null, previous_until: null, events: JSON.stringify(['batch.completed']), enabled: 1, created_at: Date.now() });
    const fileId = await upload(client, [chatLine('w0', 'hello')]);
    const created = await client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await runToEnd(client, created.id);
    const deliveries = await gw.services.db.selectFrom('webhook_deliveries').selectAll().where('subject_id', '=', created.id).execute();
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0].event_type).toBe('batch.completed');
    expect(JSON.parse(deliveries[0].payload)).toMatchObject({ type: 'batch.completed', data: { id: created.id, object: 'batch', status: 'completed', request_counts: { total: 1, completed: 1 } } });
  });
});

describe('batch lines as calls', () => {
  it('tries a line again at a later look after a 503, and logs each line as a request of route batch:<endpoint>', async () => {
    fake.next({ kind: 'status', status: 503 }, (r) => r.body?.messages?.[0]?.content === 'flaky');
    const fileId = await upload(client, [chatLine('r0', 'flaky'), chatLine('r1', 'steady')]);
    const created = await client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await runToEnd(client, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 2, failed: 0 } });
    const output = (await (await client.files.content(done.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(output.map((r) => r.response.body.choices[0].message.content)).toEqual(['echo flaky', 'echo steady']);
    // Sent twice: the 503, then the try at a later look (the channel itself retries nothing).
    expect(fake.requests.filter((r) => r.body?.messages?.[0]?.content === 'flaky')).toHaveLength(2);

    await gw.services.requestLogs.commitQueued();
    const rows = await gw.services.db.selectFrom('request_logs').select(['route', 'request_id', 'status', 'cost_micros', 'model']).where('request_id', 'like', `${created.id}:%`).orderBy('request_id').execute();
    expect(rows).toEqual([
      { route: 'batch:chat-completions', request_id: `${created.id}:0`, status: 200, cost_micros: 47, model: 'fake-chat' },
      { route: 'batch:chat-completions', request_id: `${created.id}:1`, status: 200, cost_micros: 47, model: 'fake-chat' },
    ]);
  });
});
