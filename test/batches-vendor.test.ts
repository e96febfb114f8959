// Batches relayed to a vendor's batch API, through the official SDKs against a fake that follows OpenAI's Files + Batch
// API and Anthropic's Message Batches: the lines go up as one upload (models mapped), the vendor batch is polled at the
// runner's looks (an injected clock, explicit ticks), its results come back in the client's dialect and order, each
// billed once at the batch price; a cancel is relayed, a vendor failure fails the batch, a vendor without a batch API
// leaves the lines to the gateway.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { FakeBatchApis } from './kit/fake-batch-apis.js';
import { existsSync } from 'node:fs';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { UploadFile } from '../src/batches/vendor-submit.js';

let fake: FakeUpstream;
let plain: FakeUpstream;
/** An operator's guard service (docs/guardrails.md, "The http guard protocol"): rewrites a name, counts what it checks. */
let guard: FakeUpstream;
const NAME = 'Alice Smith';
let apis: FakeBatchApis;
let gw: TestGateway;
let client: OpenAI;
let anthropic: Anthropic;
let clock = Date.now();

/** List price 2 / 10 USD per million input / output tokens, batch price half: 47 micro-dollars for 12 in and 7 out. */
const chatModels = (id: string) => `  - id: ${id}
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0, batch: { inputPerMillion: 1.0, outputPerMillion: 5.0 } }
`;
/** 3 / 15 USD per million, 1.5 / 7.5 in a batch: 71 micro-dollars (70.5 rounded) for 12 in and 7 out. */
const claudeModels = `  - id: fake-claude
    upstream: upstream-claude
    kind: chat
    price: { inputPerMillion: 3.0, outputPerMillion: 15.0, batch: { inputPerMillion: 1.5, outputPerMillion: 7.5 } }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  apis = new FakeBatchApis();
  fake.route(apis.route);
  // A vendor that speaks the chat API and has no batch API (its upload answers 404).
  plain = await FakeUpstream.start();
  guard = await FakeUpstream.start();
  guard.route((req, res) => {
    const { texts } = req.body as { texts: string[] };
    json(res, 200, { verdict: 'redact', texts: texts.map((t) => (t.includes(NAME) ? t.replaceAll(NAME, 'a customer') : null)) });
    return true;
  });
  gw = await startGateway({
    channels: {
      vendor: chatChannel('vendor', `${fake.url}/v1`, { models: chatModels('fake-chat') }),
      claude: chatChannel('claude', `${fake.url}/v1`, { protocol: 'anthropic-messages', models: claudeModels }),
      plain: chatChannel('plain', `${plain.url}/v1`, { models: chatModels('plain-chat') }),
    },
    files: {
      'guardrails/main.yaml': `- id: names\n  kind: http\n  http: { url: "${guard.url}/check" }\n  action: redact\n`,
      'routes/main.yaml': '- id: guarded-chat\n  targets: [{ model: fake-chat }]\n  guardrails: [names]\n',
    },
    extraConfig: 'tasks:\n  tickMilliseconds: 3600000\n  batches: { linesPerTick: 100, inFlightPerChannel: 8 }\n',
    listen: true,
    overrides: { now: () => clock },
  });
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
  await plain?.close();
  await guard?.close();
});
afterEach(() => {
  apis.outcome = 'complete';
  apis.deleteFails = false;
});

const chatLine = (customId: string, content: string, model = 'fake-chat') =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, max_tokens: 20, messages: [{ role: 'user', content }] } });

async function createBatch(lines: string[]): Promise<OpenAI.Batches.Batch> {
  const file = await client.files.create({ file: await toFile(Buffer.from(lines.join('\n') + '\n'), 'input.jsonl'), purpose: 'batch' });
  return client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
}

/** One look of the runner, two minutes on (past the longest poll interval). */
async function tick(): Promise<void> {
  clock += 120_000;
  await gw.services.batches.tick();
}

async function runToEnd(id: string): Promise<OpenAI.Batches.Batch> {
  for (let i = 0; i < 10; i++) {
    await tick();
    const batch = await client.batches.retrieve(id);
    if (['completed', 'failed', 'expired', 'cancelled'].includes(batch.status)) return batch;
  }
  throw new Error('the batch did not end in 10 ticks');
}

const fileLines = async (id: string) => (await (await client.files.content(id)).text()).trim().split('\n').map((l) => JSON.parse(l));

async function ledgerOf(batchId: string) {
  await gw.services.spend.commitQueued?.();
  return gw.services.db.selectFrom('usage_ledger').select(['request_id', 'cost_micros']).where('request_id', 'like', `${batchId}:%`).orderBy('request_id').execute();
}

const vendorCalls = (f: FakeUpstream, method: string, pattern: RegExp) => f.requests.filter((r) => r.method === method && pattern.test(r.path));

describe('an OpenAI batch relayed to the vendor\'s Batch API', () => {
  it('sends the lines as one upload, models mapped, and one batch; reads 100 results back in input order, each billed once at the batch price', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `eval-${String(i).padStart(3, '0')}`);
    const created = await createBatch(ids.map((id) => chatLine(id, `question ${id}`)));
    const chatsBefore = vendorCalls(fake, 'POST', /\/chat\/completions$/).length;
    const uploadsBefore = vendorCalls(fake, 'POST', /^\/v1\/files$/).length;

    await tick();
    const uploads = vendorCalls(fake, 'POST', /^\/v1\/files$/);
    expect(uploads).toHaveLength(uploadsBefore + 1);
    const [fileId, upload] = [...apis.files].find(([, f]) => f.purpose === 'batch' && f.filename === `${created.id}.jsonl`)!;
    const sent = upload.text.trim().split('\n').map((l) => JSON.parse(l));
    expect(sent).toHaveLength(100);
    sent.forEach((line, i) => expect(line).toEqual({ custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'upstream-chat', max_tokens: 20, messages: [{ role: 'user', content: `question ${ids[i]}` }] } }));
    const vendorBatch = [...apis.batches.values()].find((b) => b.created.input_file_id === fileId)!;
    expect(vendorBatch.created).toEqual({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { gateway_batch: created.id } });
    expect((await client.batches.retrieve(created.id)).status).toBe('in_progress');

    const done = await runToEnd(created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 100, completed: 100, failed: 0 } });
    expect(done.error_file_id ?? null).toBeNull();
    const results = await fileLines(done.output_file_id!);
    expect(results.map((r) => r.custom_id)).toEqual(ids);
    results.forEach((r) => expect(r.response).toMatchObject({ status_code: 200, body: { object: 'chat.completion', model: 'fake-chat', choices: [{ message: { content: `echo question ${r.custom_id}` } }] } }));
    // Nothing was sent line by line: the vendor ran every line.
    expect(vendorCalls(fake, 'POST', /\/chat\/completions$/)).toHaveLength(chatsBefore);
    const ledger = await ledgerOf(created.id);
    expect(ledger).toHaveLength(100);
    expect(ledger.every((row) => Number(row.cost_micros) === 47)).toBe(true);
    // Read back, the vendor's copies are deleted (DELETE /v1/files/{id}): the upload and the output file (no error file).
    const outputAtVendor = vendorBatch.files.output!;
    expect(apis.deleted.filter((id) => id === fileId || id === outputAtVendor).sort()).toEqual([fileId, outputAtVendor].sort());
    expect(apis.files.has(fileId) || apis.files.has(outputAtVendor)).toBe(false);
  });

  it('streams an upload larger than the memory it is built in: written to a file a chunk at a time, sent whole, removed', async () => {
    const upload = await UploadFile.create();
    const line = `${JSON.stringify({ custom_id: 'x', body: 'y'.repeat(1000) })}\n`;
    let most = 0;
    for (let i = 0; i < 4000; i++) {
      await upload.add(line);
      most = Math.max(most, upload.held);
    }
    // 4 MB written; memory never held more than one 64 KiB chunk and a line.
    expect(upload.bytes).toBe(4000 * Buffer.byteLength(line));
    expect(most).toBeLessThan(64 * 1024 + Buffer.byteLength(line));
    const file = await upload.file('big.jsonl');
    expect(file.size).toBe(upload.bytes);
    expect((await file.slice(0, line.length).text())).toBe(line);
    await upload.remove();
    expect(existsSync(upload.path)).toBe(false);

    // Through the gateway: 300 lines of 1 KB, an upload of five chunks, arrive whole and in order.
    const ids = Array.from({ length: 300 }, (_, i) => `big-${i}`);
    const created = await createBatch(ids.map((id) => chatLine(id, `${id} ${'z'.repeat(1000)}`)));
    await tick();
    const [, sent] = [...apis.files].find(([, f]) => f.purpose === 'batch' && f.filename === `${created.id}.jsonl`)!;
    expect(sent.text.length).toBeGreaterThan(5 * 64 * 1024);
    expect(sent.text.trim().split('\n').map((l) => JSON.parse(l).body.messages[0].content.split(' ')[0])).toEqual(ids);
    const done = await runToEnd(created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 300, completed: 300 } });
  });

  it('writes a line the vendor answered with an error to the error file, unbilled', async () => {
    const created = await createBatch([chatLine('ok-1', 'fine'), chatLine('bad', 'REFUSE this'), chatLine('ok-2', 'also fine')]);
    const done = await runToEnd(created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 2, failed: 1 } });
    expect((await fileLines(done.output_file_id!)).map((r) => r.custom_id)).toEqual(['ok-1', 'ok-2']);
    const [error] = await fileLines(done.error_file_id!);
    expect(error).toMatchObject({ custom_id: 'bad', response: { status_code: 400, body: { error: { type: 'invalid_request_error', message: expect.stringContaining('refused by the fake vendor') } } } });
    expect((await ledgerOf(created.id)).map((row) => row.request_id)).toEqual([`${created.id}:0`, `${created.id}:2`]);
    const vendorBatch = [...apis.batches.values()].find((b) => (b.created.metadata as { gateway_batch?: string })?.gateway_batch === created.id)!;
    for (const id of [vendorBatch.created.input_file_id as string, vendorBatch.files.output!, vendorBatch.files.errors!]) expect(apis.deleted).toContain(id);
  });

  it('completes the batch when the vendor cannot delete its files (logged, left there)', async () => {
    apis.deleteFails = true;
    const deletedBefore = apis.deleted.length;
    const created = await createBatch([chatLine('d0', 'keep me')]);
    const done = await runToEnd(created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 1, completed: 1, failed: 0 } });
    expect((await fileLines(done.output_file_id!)).map((r) => r.custom_id)).toEqual(['d0']);
    const vendorBatch = [...apis.batches.values()].find((b) => (b.created.metadata as { gateway_batch?: string })?.gateway_batch === created.id)!;
    expect(vendorCalls(fake, 'DELETE', new RegExp(`^/v1/files/${vendorBatch.created.input_file_id as string}$`))).toHaveLength(1);
    expect(apis.deleted.length).toBe(deletedBefore);
  });

  it('relays a cancel: what the vendor answered is kept and billed, the rest is batch_cancelled', async () => {
    const created = await createBatch(['c0', 'c1', 'c2', 'c3'].map((id) => chatLine(id, `q ${id}`)));
    await tick();
    const vendorBatch = [...apis.batches.values()].at(-1)!;
    expect((await client.batches.cancel(created.id)).status).toBe('cancelling');
    const done = await runToEnd(created.id);
    expect(vendorCalls(fake, 'POST', new RegExp(`^/v1/batches/${vendorBatch.id}/cancel$`))).toHaveLength(1);
    expect(done).toMatchObject({ status: 'cancelled', request_counts: { total: 4, completed: 1, failed: 0 } });
    expect((await fileLines(done.output_file_id!)).map((r) => r.custom_id)).toEqual(['c0']);
    expect((await fileLines(done.error_file_id!)).map((r) => [r.custom_id, r.error.code])).toEqual([['c1', 'batch_cancelled'], ['c2', 'batch_cancelled'], ['c3', 'batch_cancelled']]);
    expect(await ledgerOf(created.id)).toHaveLength(1);
  });

  it('fails the batch when the vendor batch fails: its errors shown, every line in the error file, nothing billed', async () => {
    apis.outcome = 'fail';
    const created = await createBatch([chatLine('f0', 'x'), chatLine('f1', 'y')]);
    const done = await runToEnd(created.id);
    expect(done).toMatchObject({ status: 'failed', request_counts: { total: 2, completed: 0, failed: 0 } });
    expect(typeof done.failed_at).toBe('number');
    expect(done.errors?.data?.[0]).toMatchObject({ code: 'invalid_json_line', message: 'This line is not parseable as valid JSON.' });
    expect((await fileLines(done.error_file_id!)).map((r) => r.error.code)).toEqual(['batch_failed', 'batch_failed']);
    expect(await ledgerOf(created.id)).toHaveLength(0);
  });

  it("checks each line's input once: when it is sent to the vendor (redacted there), not again when its answer is read back", async () => {
    const checksBefore = guard.requests.length;
    const created = await createBatch([chatLine('g0', `a note from ${NAME}`, 'guarded-chat'), chatLine('g1', 'nothing to hide', 'guarded-chat')]);
    await tick();
    const [, upload] = [...apis.files].find(([, f]) => f.purpose === 'batch' && f.filename === `${created.id}.jsonl`)!;
    expect(upload.text.trim().split('\n').map((l) => JSON.parse(l).body.messages[0].content)).toEqual(['a note from a customer', 'nothing to hide']);
    expect(guard.requests.length - checksBefore).toBe(2);
    const done = await runToEnd(created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 2, failed: 0 } });
    // Two lines, two checks: reading the answers back checked nothing again.
    expect(guard.requests.length - checksBefore).toBe(2);
    const results = await fileLines(done.output_file_id!);
    expect(results.map((r) => r.response.body.choices[0].message.content)).toEqual(['echo a note from a customer', 'echo nothing to hide']);
    expect(await ledgerOf(created.id)).toHaveLength(2);
  });

  it('leaves the lines to the gateway when the vendor has no batch API (its upload answers 404)', async () => {
    const created = await createBatch([chatLine('p0', 'one', 'plain-chat'), chatLine('p1', 'two', 'plain-chat')]);
    await tick();
    expect(vendorCalls(plain, 'POST', /^\/v1\/files$/)).toHaveLength(1);
    expect(vendorCalls(plain, 'POST', /\/chat\/completions$/)).toHaveLength(2);
    const done = await runToEnd(created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 2, failed: 0 } });
    expect(await ledgerOf(created.id)).toHaveLength(2);
  });
});

describe('relayed batches across dialects, and after a crash', () => {
  it('sends an OpenAI batch of an Anthropic model to Message Batches, its answers translated back to chat completions', async () => {
    const created = await createBatch([chatLine('a0', 'first', 'fake-claude'), chatLine('a1', 'second', 'fake-claude')]);
    await tick();
    const vendorBatch = [...apis.batches.values()].at(-1)!;
    expect(vendorBatch.kind).toBe('anthropic');
    expect(vendorBatch.created.requests).toEqual([
      { custom_id: 'line-0', params: expect.objectContaining({ model: 'upstream-claude', max_tokens: 20, messages: [{ role: 'user', content: 'first' }] }) },
      { custom_id: 'line-1', params: expect.objectContaining({ model: 'upstream-claude', max_tokens: 20, messages: [{ role: 'user', content: 'second' }] }) },
    ]);
    const done = await runToEnd(created.id);
    expect(done.status).toBe('completed');
    const results = await fileLines(done.output_file_id!);
    expect(results.map((r) => [r.custom_id, r.response.body.object, r.response.body.choices[0].message.content])).toEqual([['a0', 'chat.completion', 'echo first'], ['a1', 'chat.completion', 'echo second']]);
    expect((await ledgerOf(created.id)).map((row) => Number(row.cost_micros))).toEqual([71, 71]);
  });

  it('relays a Message Batch made with @anthropic-ai/sdk; results() streams each in input order', async () => {
    const requests = ['m0', 'm1', 'm2'].map((id) => ({ custom_id: id, params: { model: 'fake-claude', max_tokens: 20, messages: [{ role: 'user' as const, content: `question ${id}` }] } }));
    const created = await anthropic.messages.batches.create({ requests });
    let batch = created;
    for (let i = 0; i < 5 && batch.processing_status !== 'ended'; i++) {
      await tick();
      batch = await anthropic.messages.batches.retrieve(created.id);
    }
    expect(batch).toMatchObject({ processing_status: 'ended', request_counts: { succeeded: 3, errored: 0 } });
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
    expect(results.map((r) => r.custom_id)).toEqual(['m0', 'm1', 'm2']);
    for (const r of results) expect((r.result as Anthropic.Messages.MessageBatchSucceededResult).message).toMatchObject({ model: 'fake-claude', content: [{ type: 'text', text: `echo question ${r.custom_id}` }] });
    expect(await ledgerOf(created.id)).toHaveLength(3);
    // Read back, the vendor's batch and its results are deleted (DELETE /v1/messages/batches/{id}).
    const vendorId = vendorCalls(fake, 'GET', /^\/v1\/messages\/batches\/[^/]+\/results$/).at(-1)!.path.split('/')[4];
    expect(apis.deleted).toContain(vendorId);
    expect(apis.batches.has(vendorId)).toBe(false);
  });

  it('reads the results again after a crash mid-way without billing a line twice', async () => {
    const created = await createBatch(['r0', 'r1', 'r2'].map((id) => chatLine(id, id)));
    await runToEnd(created.id);
    // The crash window: lines 1 and 2 were billed, but their state and the batch's end never landed (so nothing was
    // deleted at the vendor yet: its files are put back).
    apis.restore();
    const { db } = gw.services;
    await db.updateTable('batch_lines').set({ status: 'pending', result: null, cost_micros: 0 }).where('batch_id', '=', created.id).where('line', '>=', 1).execute();
    await db.updateTable('batches').set({ status: 'in_progress', succeeded: 1, completed_at: null, output_file_id: null, vendor_step: 'polling' }).where('id', '=', created.id).execute();
    const done = await runToEnd(created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 3 } });
    expect((await fileLines(done.output_file_id!)).map((r) => r.custom_id)).toEqual(['r0', 'r1', 'r2']);
    expect((await ledgerOf(created.id)).map((row) => row.request_id)).toEqual([0, 1, 2].map((n) => `${created.id}:${n}`));
  });

  it('fails a batch found mid-creation after a crash rather than creating its vendor batch twice', async () => {
    const created = await createBatch([chatLine('k0', 'x')]);
    await gw.services.db.updateTable('batches').set({ vendor_step: 'creating' }).where('id', '=', created.id).execute();
    const before = vendorCalls(fake, 'POST', /^\/v1\/batches$/).length;
    const done = await runToEnd(created.id);
    expect(done).toMatchObject({ status: 'failed', errors: { data: [{ code: 'vendor_submit_interrupted' }] } });
    expect(vendorCalls(fake, 'POST', /^\/v1\/batches$/)).toHaveLength(before);
  });
});
