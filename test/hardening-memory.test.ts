// Issue 27, item 6: small requests cannot pin large memory. A workspace file named as a video reference is streamed from
// storage (never copied per request); reference bytes in memory share a process-wide budget (503 + retry-after past it);
// a key has a bounded number of unfinished tasks (429); a pipeline answer is read within server.upstreamAnswerMaxBytes.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { installOpenAIVideos } from './kit/fake-tasks.js';
import { multipart } from './kit/files.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';
import { png } from './kit/media-samples.js';
import { openaiVideoChannel, tasksConfig, waitFor } from './kit/tasks.js';
import { bytesInFlight } from '../src/http/bytes-in-flight.js';

let fake: FakeUpstream | undefined;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  await fake?.close();
  gw = fake = undefined;
});

const MiB = 1024 * 1024;

/** A gate the test opens: until then the upstream's create does not answer (the submit holds its reference meanwhile). */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** A video upstream whose create answers once `held` resolves. */
async function startVideos(extraTasks: string, serverConfig = '', held: Promise<void> = Promise.resolve()) {
  fake = await FakeUpstream.start();
  installOpenAIVideos(fake, { steps: Array.from({ length: 200 }, () => 50) });
  let creates = 0;
  fake.route(async (req, res) => {
    if (req.method !== 'POST' || !req.path.endsWith('/videos')) return false;
    await held;
    json(res, 200, { id: `video_up_${++creates}`, object: 'video', status: 'queued', progress: 0 });
    return true;
  });
  gw = await startGateway({ channels: { tasks: openaiVideoChannel(fake.url) }, extraConfig: tasksConfig(fake, extraTasks), serverConfig });
  return { gw, fake };
}

const createVideo = (gw: TestGateway, key: string, form?: ReturnType<typeof multipart>) =>
  gw.app.inject({
    method: 'POST',
    url: '/v1/videos',
    headers: { authorization: `Bearer ${key}`, ...(form ? form.headers : {}) },
    payload: form ? form.payload : { model: 'sora-2', prompt: 'a cat', seconds: 4 },
  });

describe('unfinished tasks per key', () => {
  it('admits tasks.maxInFlightPerKey of 12 sent at once, refuses the rest with 429 and retry-after; another key is unaffected', async () => {
    const { gw } = await startVideos('  maxInFlightPerKey: 3\n');
    const answers = await Promise.all(Array.from({ length: 12 }, () => createVideo(gw, gw.key)));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
    const refused = answers.find((a) => a.statusCode === 429)!;
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.json().error.code).toBe('rate_limited');
    expect((await createVideo(gw, await gw.newKey())).statusCode).toBe(200);
  });
});

describe('reference bytes in flight', () => {
  const upload = (bytes: number) => multipart([
    { name: 'model', value: 'sora-2' },
    { name: 'prompt', value: 'animate' },
    { name: 'input_reference', value: png(bytes), filename: 'r.png', contentType: 'image/png' },
  ]);

  it('refuses an upload that would pass server.referenceBytesInFlight with 503 and retry-after, and admits it once the first is submitted', async () => {
    const upstream = gate();
    const { gw } = await startVideos('', '  referenceBytesInFlight: 1048576\n', upstream.opened);
    const first = await createVideo(gw, gw.key, upload(700 * 1024));
    expect(first.statusCode).toBe(200);
    const second = await createVideo(gw, gw.key, upload(700 * 1024));
    expect(second.statusCode).toBe(503);
    expect(second.headers['retry-after']).toBe('1');
    expect(second.json().error.code).toBe('server_busy');
    // The first submit ends: its bytes are let go.
    upstream.open();
    await waitFor(async () => bytesInFlight(1048576).held, (held) => held === 0);
    expect(bytesInFlight(1048576).held).toBe(0);
    expect((await createVideo(gw, gw.key, upload(700 * 1024))).statusCode).toBe(200);
  });

  it('streams a workspace file named as the reference from storage: nothing held in memory, the upstream gets every byte', async () => {
    const upstream = gate();
    const { gw, fake } = await startVideos('', '  referenceBytesInFlight: 1048576\n', upstream.opened);
    const image = png(3 * MiB);
    const form = multipart([{ name: 'file', value: image, filename: 'big.png', contentType: 'image/png' }, { name: 'purpose', value: 'vision' }]);
    const fileId = (await gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload })).json().id;
    // Three at once, each naming a 3 MiB file, under a 1 MiB budget: none is refused, none holds bytes.
    const answers = await Promise.all([1, 2, 3].map(() => gw.app.inject({ method: 'POST', url: '/v1/videos', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'sora-2', prompt: 'animate', input_reference: fileId } })));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    // While the upstream has not answered, the three submits stream from storage and hold nothing.
    const posts = () => fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/videos'));
    const sent = await waitFor(async () => posts(), (requests) => requests.length >= 3);
    expect(bytesInFlight(1048576).held).toBe(0);
    upstream.open();
    expect(sent).toHaveLength(3);
    for (const request of sent) expect(request.raw.includes(image)).toBe(true);
  });
});

describe('Responses input images by file id', () => {
  it('hold their bytes against server.referenceBytesInFlight: past it, 503 before any upstream call', async () => {
    fake = await FakeUpstream.start();
    gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat }) }, serverConfig: '  referenceBytesInFlight: 4096\n' });
    const form = multipart([{ name: 'file', value: png(3000), filename: 'a.png', contentType: 'image/png' }, { name: 'purpose', value: 'vision' }]);
    const fileId = (await gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload })).json().id;
    const res = await gw.app.inject({
      method: 'POST',
      url: '/v1/responses',
      headers: { authorization: `Bearer ${gw.key}` },
      payload: { model: 'fake-chat', input: [{ role: 'user', content: [{ type: 'input_image', file_id: fileId }] }] },
    });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(fake.requests).toHaveLength(0);
    expect(bytesInFlight(4096).held).toBe(0);
  });
});

describe('pipeline answers are read within a limit', () => {
  it('refuses a 2 MiB chat answer over a 1 MiB server.upstreamAnswerMaxBytes with 502 upstream_malformed, charged the reservation', async () => {
    fake = await FakeUpstream.start();
    gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat }) }, serverConfig: '  upstreamAnswerMaxBytes: 1048576\n' });
    fake.next({ kind: 'json', body: { id: 'c', object: 'chat.completion', model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(2 * MiB) }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } } });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_malformed');
    expect(res.body.length).toBeLessThan(4096);
    const rows = await gw.services.db.selectFrom('usage_ledger').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(Number(rows[0].cost_micros)).toBeGreaterThan(0);
  });
});
