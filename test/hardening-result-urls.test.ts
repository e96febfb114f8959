// Issue 37 items 3 and 5, on a Seedance-shaped task (test/conformance/seedance.yaml): a result URL the remote-fetch guard
// refuses (loopback, the metadata address, a redirect into either) fails the task unbilled and is never shown; a result
// that trickles ends by the task's own deadline, retries included.
import { createServer, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { FakeUpstream } from './kit/fake-upstream.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';
import { installVendorFake, type VendorFixture } from './kit/vendor-fake.js';
import { tasksConfig, waitFor } from './kit/tasks.js';

type SeedanceFixture = VendorFixture & { poll: { completed: { content: { video_url: string } } } };
const TIMEOUT_SECONDS = 3;

let upstream: FakeUpstream;
let canary: Server;
let canaryHits = 0;
let trickles = 0;
let gw: TestGateway;
let fixture: SeedanceFixture;

/** Sends a video header, then one byte every 100 ms for as long as the client reads. */
function trickle(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'video/mp4' });
  const head = Buffer.alloc(32);
  head.writeUInt32BE(32, 0);
  head.write('ftypisom', 4, 'ascii');
  res.write(head);
  const timer = setInterval(() => res.write(Buffer.alloc(1)), 100);
  res.on('close', () => clearInterval(timer));
}

beforeAll(async () => {
  canary = createServer((_req, res) => (canaryHits++, res.end('secret')));
  await new Promise<void>((r) => canary.listen(0, '127.0.0.1', r));
  const canaryUrl = `http://127.0.0.1:${(canary.address() as { port: number }).port}/canary`;
  upstream = await FakeUpstream.start();
  fixture = parse(readFileSync(join(repoRoot, 'test', 'conformance', 'seedance.yaml'), 'utf8')) as SeedanceFixture;
  installVendorFake(upstream, fixture);
  // Routes added later are tried first: redirects into internal addresses, and a result that trickles.
  upstream.route((req, res) => {
    const to = { '/redirect/metadata': 'http://169.254.169.254/latest/meta-data/iam/security-credentials/', '/redirect/canary': canaryUrl }[req.path];
    if (to) return res.writeHead(302, { location: to }).end(), true;
    if (req.path !== '/trickle.mp4') return false;
    trickles++;
    trickle(res);
    return true;
  });
  const channel = `id: kit\nprotocol: seedance\nbaseUrl: ${upstream.url}${fixture.basePath}\ncredential: { env: KIT_CREDENTIAL }\nmodels:\n  - ${JSON.stringify(fixture.model)}\n`;
  // The task's deadline 3 s; one fetch may take 1 s (network.timeoutSeconds), so a trickle is tried again within it.
  gw = await startGateway({ channels: { kit: channel }, env: { KIT_CREDENTIAL: 'kit-key' }, extraConfig: `${tasksConfig(upstream, `  timeoutSeconds: ${TIMEOUT_SECONDS}\n`)}  timeoutSeconds: 1\n` });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  canary?.closeAllConnections();
  await new Promise((r) => canary?.close(r));
});

const ledgerRows = async () => (await gw.services.db.selectFrom('usage_ledger').selectAll().execute()).length;
const reservations = async () => (await gw.services.db.selectFrom('spend_reservations').selectAll().execute()).length;

/** Creates a task whose upstream result is `videoUrl` and reads it until it ends. */
async function runTask(videoUrl: string) {
  fixture.poll.completed.content.video_url = videoUrl;
  const key = await gw.newKey({ spendCapMicros: 5_000_000 });
  const started = Date.now();
  const created = await gw.app.inject({ method: 'POST', url: '/api/v1/videos', headers: { authorization: `Bearer ${key}` }, payload: { model: fixture.model.id, ...fixture.request } });
  expect(created.statusCode, created.body).toBe(200);
  const read = async () => (await gw.app.inject({ method: 'GET', url: `/api/v1/videos/${created.json().id}`, headers: { authorization: `Bearer ${key}` } })).json();
  const done = await waitFor(read, (t) => t.status === 'completed' || t.status === 'failed', 30_000);
  return { done, seconds: (Date.now() - started) / 1000 };
}

describe('a result URL the remote-fetch guard refuses (item 3)', () => {
  it.each([
    ['on loopback', 'https://[::1]/secret.mp4', 'secret.mp4'],
    ['on loopback by name', 'https://localhost/secret.mp4', 'secret.mp4'],
    ['on the metadata address', 'http://169.254.169.254/latest/meta-data/', 'meta-data'],
    ['redirecting to the metadata address', '/redirect/metadata', 'meta-data'],
    ['redirecting to a loopback canary', '/redirect/canary', 'canary'],
  ])('%s fails the task result_unavailable, unbilled, the URL never shown', { timeout: 40_000 }, async (_name, url, hidden) => {
    const [rows, hits] = [await ledgerRows(), canaryHits];
    const { done } = await runTask(url.startsWith('/') ? `${upstream.url}${url}` : url);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'result_unavailable', message: expect.stringContaining('refused') } });
    expect(done.provider_url ?? null).toBeNull();
    expect(done.cost).toBeUndefined();
    expect(JSON.stringify(done)).not.toContain(hidden);
    expect(await ledgerRows()).toBe(rows);
    expect(await reservations()).toBe(0);
    expect(canaryHits).toBe(hits);
  });
});

describe('a result that trickles (item 5)', () => {
  it('ends by the task deadline, every retry included, not a minute later', { timeout: 40_000 }, async () => {
    const before = trickles;
    const { done, seconds } = await runTask(`${upstream.url}/trickle.mp4`);
    // Its URL is one the client may fetch itself: completed, the archive failed, the URL kept.
    expect(done).toMatchObject({ status: 'completed', archive_status: 'failed', archive_error: expect.stringContaining('task deadline') });
    expect(trickles - before).toBeGreaterThanOrEqual(1);
    // The deadline is 3 s from creation; reading the task through the API adds little. It used to end ~60 s later.
    expect(seconds).toBeLessThan(TIMEOUT_SECONDS + 3);
  });
});
