// Issue 27, items 2, 4 and 14: deadlines that fire even after a garbage collection, an archive that ends by the task's
// own deadline (issue 37 item 5: no grace past it), a reservation that outlives its task's work (and a lapsed one that can never take spend past the cap),
// transient download failures tried again, nothing billed for a result nobody can get, and a task whose file is gone.
import { createServer, type Server, type ServerResponse } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { installOpenAIVideos, type TaskScript } from './kit/fake-tasks.js';
import { multipart } from './kit/files.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { png } from './kit/media-samples.js';
import { openaiVideoChannel, tasksConfig, waitFor } from './kit/tasks.js';
import { sweepExpiredFiles } from '../src/files/sweeper.js';
import type { ServiceOverrides } from '../src/services.js';

// A collection on demand, as the reproduction forced one.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let fake: FakeUpstream | undefined;
let gw: TestGateway | undefined;
let trickler: Server | undefined;
afterEach(async () => {
  trickler?.closeAllConnections();
  await new Promise((r) => (trickler ? trickler.close(r) : r(undefined)));
  await gw?.close();
  await fake?.close();
  gw = fake = trickler = undefined;
});

const mp4Header = () => {
  const box = Buffer.alloc(32);
  box.writeUInt32BE(32, 0);
  box.write('ftypisom', 4, 'ascii');
  return box;
};

/** Sends `head`, then one byte every `everyMs`, for `bytes` more bytes (forever when undefined). */
function trickle(res: ServerResponse, head: Buffer, type: string, everyMs: number, bytes?: number): void {
  res.writeHead(200, { 'content-type': type });
  res.write(head);
  let sent = 0;
  const timer = setInterval(() => {
    if (res.destroyed || (bytes !== undefined && sent >= bytes)) {
      clearInterval(timer);
      if (!res.destroyed) res.end();
      return;
    }
    res.write(Buffer.alloc(1));
    sent++;
  }, everyMs);
  res.on('close', () => clearInterval(timer));
}

/** Collects garbage every 20 ms until `work` settles; answers how long it took, or 'pending' past `limitMs`. */
async function underCollections<T>(work: Promise<T>, limitMs: number): Promise<{ seconds: number; outcome: T | 'pending' }> {
  const started = Date.now();
  const collector = setInterval(gc, 20);
  try {
    const outcome = await Promise.race([work, new Promise<'pending'>((r) => setTimeout(r, limitMs, 'pending'))]);
    return { seconds: (Date.now() - started) / 1000, outcome };
  } finally {
    clearInterval(collector);
  }
}

async function startVideos(script: Partial<TaskScript>, extra: string, content?: (res: ServerResponse, n: number) => void, keyCap?: number, overrides?: ServiceOverrides) {
  fake = await FakeUpstream.start();
  let downloads = 0;
  const tasks = installOpenAIVideos(fake, script);
  // Routes added later are tried first.
  if (content) {
    fake.route((req, res) => {
      if (req.method !== 'GET' || !/\/videos\/[^/]+\/content$/.test(req.path)) return false;
      content(res, downloads++);
      return true;
    });
  }
  gw = await startGateway({ channels: { tasks: openaiVideoChannel(fake.url) }, extraConfig: tasksConfig(fake, extra), overrides });
  const key = keyCap === undefined ? gw.key : await gw.newKey({ spendCapMicros: keyCap });
  return { gw, fake, tasks, key, downloads: () => downloads };
}

const create = (gw: TestGateway, key: string, payload: object) => gw.app.inject({ method: 'POST', url: '/api/v1/videos', headers: { authorization: `Bearer ${key}` }, payload });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const read = async (gw: TestGateway, id: string, key = gw.key): Promise<Record<string, any>> => (await gw.app.inject({ method: 'GET', url: `/api/v1/videos/${id}`, headers: { authorization: `Bearer ${key}` } })).json();
const finished = (t: Record<string, unknown>) => t.status === 'completed' || t.status === 'failed';
const ledger = (gw: TestGateway) => gw.services.db.selectFrom('usage_ledger').selectAll().execute();
const spent = async (gw: TestGateway) => (await ledger(gw)).reduce((sum, r) => sum + Number(r.cost_micros), 0);

describe('deadlines that fire after a garbage collection (item 2)', () => {
  it('ends an image edit whose image_url trickles by the network timeout, collections or not', { timeout: 30_000 }, async () => {
    trickler = createServer((_req, res) => trickle(res, png().subarray(0, 64), 'image/png', 100));
    await new Promise<void>((r) => trickler!.listen(0, '127.0.0.1', r));
    const host = `127.0.0.1:${(trickler.address() as { port: number }).port}`;
    fake = await FakeUpstream.start();
    gw = await startGateway({
      channels: { images: `id: images\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: fake-image\n    kind: image\n    price: { perImage: 0.04 }\n` },
      extraConfig: `network:\n  allowHosts: ["${host}"]\n  timeoutSeconds: 1\n`,
    });
    const form = multipart([{ name: 'model', value: 'fake-image' }, { name: 'prompt', value: 'p' }, { name: 'image_url', value: `http://${host}/slow.png` }]);
    const { seconds, outcome } = await underCollections(gw.app.inject({ method: 'POST', url: '/v1/images/edits', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload }), 12_000);
    expect(outcome).not.toBe('pending');
    if (outcome === 'pending') return;
    expect(outcome.statusCode).toBe(400);
    expect(outcome.json().error.message).toContain('took too long');
    expect(seconds).toBeLessThan(10);
    expect(fake.requests).toHaveLength(0);
  });

  it('ends a task whose download trickles at the task deadline: failed, nothing billed, the reservation gone', { timeout: 40_000 }, async () => {
    const { gw, downloads } = await startVideos({ steps: [] }, '  timeoutSeconds: 4\n', (res) => trickle(res, mp4Header(), 'video/mp4', 100));
    const id = (await create(gw, gw.key, { model: 'sora-2', prompt: 'slow', seconds: 4 })).json().id;
    const { seconds, outcome } = await underCollections(waitFor(() => read(gw, id), finished, 25_000).catch(() => 'timed out'), 25_000);
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'result_unavailable' } });
    expect((outcome as { error: { message: string } }).error.message).toContain('task deadline');
    expect(seconds).toBeLessThan(15);
    expect(downloads()).toBeGreaterThan(0);
    expect(await ledger(gw)).toHaveLength(0);
    expect(await gw.services.db.selectFrom('spend_reservations').selectAll().execute()).toHaveLength(0);
  });

  it('keeps a task reservation while its archive runs past the first expiry of that reservation: a second task on the same cap is refused', { timeout: 40_000 }, async () => {
    // 0.40 cap; each 4-second video reserves 0.40. The first one's result takes ~5 s to arrive, within its 8 s deadline
    // (the archive ends by the task's own deadline, issue 37 item 5).
    let ahead = 0;
    const now = () => Date.now() + ahead;
    const { gw, key, downloads } = await startVideos({ steps: [], seconds: '4' }, '  timeoutSeconds: 8\n', (res) => trickle(res, mp4Header(), 'video/mp4', 100, 50), 400_000, { now });
    const first = (await create(gw, key, { model: 'sora-2', prompt: 'one', seconds: 4 })).json().id;
    await waitFor(() => read(gw, first, key), (t) => t.status === 'in_progress' || t.status === 'queued' || finished(t));
    const reservation = () => gw.services.db.selectFrom('spend_reservations').selectAll().executeTakeFirst();
    // The archive is under way; the meter's clock moves 1.2 s past the moment the first reservation (timeout + lease)
    // ran out. The archive's renewals carry it past the clock's new reading: it never lapses.
    await waitFor(async () => downloads(), (n) => n > 0);
    ahead = Number((await reservation())!.expires_at) - Date.now() + 1200;
    await waitFor(reservation, (row) => row !== undefined && Number(row.expires_at) > now());
    const second = await create(gw, key, { model: 'sora-2', prompt: 'two', seconds: 4 });
    expect(second.statusCode).toBe(402);
    const done = await waitFor(() => read(gw, first, key), finished, 25_000);
    expect(done).toMatchObject({ status: 'completed', archive_status: 'archived', cost: { amount: 0.4 } });
    expect(await spent(gw)).toBe(400_000);
  });

  it('never takes spend past the cap when a reservation lapsed anyway (swept while its archive ran)', { timeout: 40_000 }, async () => {
    const { gw, key, downloads } = await startVideos({ steps: [], seconds: '4' }, '', (res) => trickle(res, mp4Header(), 'video/mp4', 50, 30), 400_000);
    const first = (await create(gw, key, { model: 'sora-2', prompt: 'one', seconds: 4 })).json().id;
    const charge = JSON.parse((await gw.services.db.selectFrom('tasks').select('charge').where('id', '=', first).executeTakeFirstOrThrow()).charge);
    // The process stalled mid-archive: its reservation ran out and was swept, and another request took the budget meanwhile.
    await waitFor(async () => downloads(), (n) => n > 0);
    await gw.services.db.deleteFrom('spend_reservations').where('id', '=', charge.id).execute();
    const second = await create(gw, key, { model: 'sora-2', prompt: 'two', seconds: 4 });
    await waitFor(() => read(gw, first, key), finished, 25_000);
    // Refused when the renewal found the lapse first and held the budget again; else admitted, and then the first
    // task's settlement finds no room: what could not be charged is recorded as overage, never charged.
    expect([200, 402]).toContain(second.statusCode);
    if (second.statusCode === 200) await waitFor(() => read(gw, second.json().id, key), finished, 25_000);
    expect(await spent(gw)).toBeLessThanOrEqual(400_000);
    const rows = await ledger(gw);
    expect(rows).toHaveLength(second.statusCode === 200 ? 2 : 1);
    expect(rows.reduce((sum, r) => sum + Number(r.overage_micros), 0)).toBe(second.statusCode === 200 ? 400_000 : 0);
  });
});

describe('downloads tried again; nothing billed for a result nobody can get (item 4)', () => {
  it('archives a video after one transient 500 on its download', { timeout: 30_000 }, async () => {
    const { gw, downloads } = await startVideos({ steps: [] }, '', (res, n) => {
      if (n === 0) return json(res, 500, { error: { message: 'try later' } });
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.end(Buffer.concat([mp4Header(), Buffer.alloc(2000)]));
    });
    const id = (await create(gw, gw.key, { model: 'sora-2', prompt: 'retry', seconds: 4 })).json().id;
    const done = await waitFor(() => read(gw, id), finished, 20_000);
    expect(done).toMatchObject({ status: 'completed', archive_status: 'archived', cost: { amount: 0.4 } });
    expect(done.url).toContain('/content?token=');
    expect(downloads()).toBe(2);
  });

  it.each([
    ['404', (res: ServerResponse) => json(res, 404, { error: { message: 'gone' } })],
    ['an HTML page', (res: ServerResponse) => (res.writeHead(200, { 'content-type': 'text/html' }), res.end('<!doctype html><html><body>login</body></html>'))],
  ])('fails a task whose download answers %s, bills nothing and releases its reservation', { timeout: 30_000 }, async (_name, answer) => {
    const { gw, key, downloads } = await startVideos({ steps: [] }, '', answer, 5_000_000);
    const id = (await create(gw, key, { model: 'sora-2', prompt: 'lost', seconds: 4 })).json().id;
    const done = await waitFor(() => read(gw, id, key), finished, 20_000);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'result_unavailable' } });
    expect(done.cost).toBeUndefined();
    expect(await ledger(gw)).toHaveLength(0);
    expect(await gw.services.db.selectFrom('spend_reservations').selectAll().execute()).toHaveLength(0);
    // A permanent failure is not asked for again.
    expect(downloads()).toBe(1);
  });
});

describe('a task whose archived file is gone (item 14)', () => {
  it('says "deleted" with no URL once its file is deleted, and "expired" once it expired', { timeout: 30_000 }, async () => {
    const { gw } = await startVideos({ steps: [] }, '');
    const ids = [];
    for (const prompt of ['a', 'b']) ids.push((await create(gw, gw.key, { model: 'sora-2', prompt, seconds: 4 })).json().id);
    const [deleted, expired] = await Promise.all(ids.map((id) => waitFor(() => read(gw, id), finished, 20_000)));
    expect(deleted).toMatchObject({ status: 'completed', archive_status: 'archived' });
    expect((await gw.app.inject({ method: 'DELETE', url: `/v1/files/${deleted.file_id}`, headers: { authorization: `Bearer ${gw.key}` } })).statusCode).toBe(200);
    expect(await read(gw, deleted.id)).toMatchObject({ archive_status: 'deleted', url: null });
    // Expired: first while its row is still there, then after the sweeper removed it.
    await gw.services.db.updateTable('files').set({ expires_at: Math.floor(Date.now() / 1000) - 1 }).where('id', '=', expired.file_id).execute();
    expect(await read(gw, expired.id)).toMatchObject({ archive_status: 'expired', url: null });
    await sweepExpiredFiles(gw.services);
    expect(await read(gw, expired.id)).toMatchObject({ archive_status: 'expired', url: null });
    const list = (await gw.app.inject({ method: 'GET', url: '/v1/videos', headers: { authorization: `Bearer ${gw.key}` } })).json();
    expect(list.data.map((t: { archive_status: string }) => t.archive_status).sort()).toEqual(['deleted', 'expired']);
  });
});
