// POST /v1/responses through the official openai SDK: passed through to a Responses channel, input_image by workspace file id,
// generated images archived (answer and stream), cost on the final response.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installResponses, type ResponsesScript } from './kit/fake-responses.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';
import { png } from './kit/media-samples.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

let fake: FakeUpstream;
let script: ResponsesScript;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  script = installResponses(fake);
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat + testModels.fakeEval }) }, listen: true });
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const sentBody = () => fake.requests.find((r) => r.path.endsWith('/responses'))!.body;
const download = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

describe('POST /v1/responses', () => {
  it('passes a request through with only the model mapped (no output bound added), answering the client model id and cost', async () => {
    const res = await client.responses.create({ model: 'fake-chat', input: 'Say hello', instructions: 'Be brief.' });
    expect(sentBody()).toEqual({ model: 'upstream-chat', input: 'Say hello', instructions: 'Be brief.' });
    expect(res.output_text).toBe(script.text);
    expect(res.model).toBe('fake-chat');
    // 20 input at 2.0/M + 8 output at 10.0/M = 40 + 80 micro-USD.
    expect((res as unknown as { cost: unknown }).cost).toEqual({ amount: 0.00012, currency: 'USD' });
  });

  it('streams the response.* events, with the client model id and the cost on response.completed, billed once from its usage', async () => {
    const stream = await client.responses.create({ model: 'fake-chat', input: 'Say hello', stream: true });
    const types: string[] = [];
    let completed: Record<string, unknown> | undefined;
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response as unknown as Record<string, unknown>;
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(text).toBe(script.text);
    expect(completed).toMatchObject({ model: 'fake-chat', cost: { amount: 0.00012, currency: 'USD' } });
  });

  it('sends an input_image file of the workspace as a data URL of its bytes', async () => {
    const file = await client.files.create({ file: await OpenAI.toFile(png(300), 'ref.png', { type: 'image/png' }), purpose: 'vision' });
    await client.responses.create({ model: 'fake-chat', input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', file_id: file.id, detail: 'auto' }] }] });
    const part = sentBody().input[0].content[1];
    expect(part).toEqual({ type: 'input_image', detail: 'auto', image_url: `data:image/png;base64,${png(300).toString('base64')}` });
  });

  it("answers 404 for another workspace's file and 400 for a file that is not an image, before any upstream call", async () => {
    const other = await gw.newWorkspace('responses-other');
    const foreign = await new OpenAI({ apiKey: await gw.newKey({ workspace: other }), baseURL: `${gw.url}/api/v1` }).files.create({ file: await OpenAI.toFile(png(), 'x.png', { type: 'image/png' }), purpose: 'vision' });
    const pdf = await client.files.create({ file: await OpenAI.toFile(Buffer.from('%PDF-1.4\n%\xe2\xe3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n', 'latin1'), 'doc.pdf', { type: 'application/pdf' }), purpose: 'user_data' });
    const ask = (fileId: string) => client.responses.create({ model: 'fake-chat', input: [{ role: 'user', content: [{ type: 'input_image', file_id: fileId, detail: 'auto' }] }] });
    await expect(ask(foreign.id)).rejects.toMatchObject({ status: 404 });
    await expect(ask(pdf.id)).rejects.toMatchObject({ status: 400 });
    expect(fake.requests.filter((r) => r.path.endsWith('/responses'))).toHaveLength(0);
  });

  it('archives an image_generation_call result in the answer', async () => {
    const res = await client.responses.create({ model: 'fake-chat', input: 'Draw a cat', tools: [{ type: 'image_generation' }] });
    const call = res.output.find((o) => o.type === 'image_generation_call') as unknown as { result: string; svc_file_id: string; svc_url: string; archive_status: string };
    expect(call.archive_status).toBe('archived');
    expect(call.svc_file_id).toMatch(/^file_/);
    expect(await download(call.svc_url)).toEqual(script.image);
  });

  it('archives an image_generation_call result in the streamed output_item.done', async () => {
    const stream = await client.responses.create({ model: 'fake-chat', input: 'Draw a cat', tools: [{ type: 'image_generation' }], stream: true });
    let archived: { svc_url?: string; archive_status?: string } | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_item.done' && event.item.type === 'image_generation_call') archived = event.item as unknown as typeof archived;
    }
    expect(archived?.archive_status).toBe('archived');
    expect(await download(archived!.svc_url!)).toEqual(script.image);
  });

  it('carries the archive fields on the same item in response.completed, so finalResponse() has them, archived once (issue 27 item 13)', async () => {
    const files = async () => (await gw.services.db.selectFrom('files').select('id').execute()).length;
    const before = await files();
    const stream = client.responses.stream({ model: 'fake-chat', input: 'Draw a cat', tools: [{ type: 'image_generation' }] });
    let streamed: { svc_file_id?: string } | undefined;
    stream.on('response.output_item.done', (event) => {
      if (event.item.type === 'image_generation_call') streamed = event.item as unknown as typeof streamed;
    });
    const final = await stream.finalResponse();
    const call = final.output.find((o) => o.type === 'image_generation_call') as unknown as { svc_file_id: string; svc_url: string; archive_status: string };
    expect(call).toMatchObject({ archive_status: 'archived', svc_file_id: streamed?.svc_file_id });
    expect(await download(call.svc_url)).toEqual(script.image);
    expect(await files()).toBe(before + 1);
  });

  it("refuses another workspace's previous_response_id, or a provider file id it was never handed, with 404 before any upstream call (issue 27 item 5)", async () => {
    const mine = await client.responses.create({ model: 'fake-chat', input: 'first turn' });
    // The stream names its response as well: recorded before the client sees it.
    const streamed = await client.responses.create({ model: 'fake-chat', input: 'first turn', stream: true });
    for await (const _event of streamed) void _event;
    const other = await gw.newWorkspace('provider-ids-other');
    const otherClient = new OpenAI({ apiKey: await gw.newKey({ workspace: other }), baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
    fake.reset();
    for (const body of [
      { previous_response_id: mine.id },
      { previous_response_id: 'resp_never_handed_out' },
      { input: [{ role: 'user' as const, content: [{ type: 'input_file' as const, file_id: 'file-provider123' }] }] },
    ]) {
      const error = await otherClient.responses.create({ model: 'fake-chat', input: 'next turn', ...body } as OpenAI.Responses.ResponseCreateParamsNonStreaming).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    }
    expect(fake.requests).toHaveLength(0);
    // The workspace it was handed to continues its own conversation.
    const next = await client.responses.create({ model: 'fake-chat', input: 'next turn', previous_response_id: mine.id });
    expect(next.output_text).toBe(script.text);
    expect(sentBody()).toMatchObject({ previous_response_id: mine.id });
  });

  it('refuses an evaluation model with 400, and writes one ledger row per response', async () => {
    await expect(client.responses.create({ model: 'fake-eval', input: 'x' })).rejects.toMatchObject({ status: 400 });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/responses', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-chat', input: 'x' } });
    expect(await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string)).toEqual([expect.objectContaining({ input_tokens: 20, output_tokens: 8, cost_micros: 120 })]);
  });
});
