// Absolute URLs a vendor names for a task: a polling URL is followed only on the channel's origin or a host the protocol
// declares (anything else fails the task, nothing sent there); a download URL carries the key only on the channel's
// origin, and a redirect to another host is followed without it.
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { mediaBytes } from './kit/vendor-fake.js';
import { waitFor } from './kit/tasks.js';

const protocol = `id: absolute
auth: { header: x-key, value: "{{ credential }}" }
operations:
  create: { path: /jobs }
  job: { method: GET, path: "/jobs/{{ upstream_id }}", encoding: none }
tasks:
  video:
    kind: video
    submit:
      operation: create
      request: { prompt: "{{ body.prompt }}" }
      id: "{{ answer.id }}"
      save: { polling_url: "{{ answer.polling_url }}" }
    poll:
      operation: job
      url: "{{ task.saved.polling_url }}"
      hosts: ["*.vendor.example"]
      status: "{{ answer.state }}"
      statusMap: { running: in_progress, done: completed, error: failed }
    result:
      download: { url: "{{ answer.file }}" }
      usage: { seconds: 4 }
`;

let vendor: FakeUpstream | undefined;
let cdn: FakeUpstream | undefined;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  await vendor?.close();
  await cdn?.close();
  gw = vendor = cdn = undefined;
});

async function start(pollingUrl: (origin: string) => string) {
  vendor = await FakeUpstream.start();
  cdn = await FakeUpstream.start();
  const seen: { path: string; key?: string; host: string }[] = [];
  const bytes = mediaBytes('video', 1);
  for (const fake of [vendor, cdn]) {
    const origin = fake.url;
    fake.route((req, res) => {
      seen.push({ path: req.path, key: req.headers['x-key'] as string | undefined, host: origin });
      if (req.method === 'POST' && req.path === '/v1/jobs') return json(res, 200, { id: 'j1', polling_url: pollingUrl(vendor!.url) }), true;
      if (req.path === '/v1/elsewhere/j1') return json(res, 200, { state: 'done', file: `${vendor!.url}/v1/files/j1:download` }), true;
      // The vendor's file URL redirects to a storage host, as signed-URL downloads do.
      if (req.path === '/v1/files/j1:download') return res.writeHead(302, { location: `${cdn!.url}/blob/j1.mp4` }).end(), true;
      if (req.path === '/blob/j1.mp4') return res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length) }).end(bytes), true;
      return false;
    });
  }
  const hosts = [new URL(vendor.url).host, new URL(cdn.url).host].map((h) => `"${h}"`).join(', ');
  gw = await startGateway({
    protocols: { 'absolute.yaml': protocol },
    channels: { v: `id: v\nprotocol: absolute\nbaseUrl: ${vendor.url}/v1\ncredential: { env: V_KEY }\nmodels:\n  - { id: v-1, kind: video, price: { perVideoSecond: 0.1 } }\n` },
    env: { V_KEY: 'secret-key' },
    extraConfig: `tasks:\n  tickMilliseconds: 10\n  leaseSeconds: 1\n  poll: { firstSeconds: 0.01, maxSeconds: 0.03 }\nnetwork:\n  allowHosts: [${hosts}]\n`,
  });
  const created = await gw.app.inject({ method: 'POST', url: '/api/v1/videos', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'v-1', prompt: 'x' } });
  const read = async () => (await gw!.app.inject({ method: 'GET', url: `/api/v1/videos/${created.json().id}`, headers: { authorization: `Bearer ${gw!.key}` } })).json();
  return { done: await waitFor(read, (t) => t.status === 'completed' || t.status === 'failed', 20_000), seen, bytes };
}

describe('absolute URLs from a vendor', () => {
  it('polls a polling URL on the channel origin, downloads with the key there, and follows a redirect to another host without it', async () => {
    const { done, seen, bytes } = await start((origin) => `${origin}/v1/elsewhere/j1`);
    expect(done).toMatchObject({ status: 'completed', archive_status: 'archived', cost: { amount: 0.4 } });
    const content = await gw!.app.inject({ method: 'GET', url: `/v1/files/${done.file_id}/content`, headers: { authorization: `Bearer ${gw!.key}` } });
    expect(content.rawPayload.equals(bytes)).toBe(true);
    expect(seen.find((s) => s.path === '/v1/elsewhere/j1')?.key).toBe('secret-key');
    expect(seen.find((s) => s.path === '/v1/files/j1:download')?.key).toBe('secret-key');
    const blob = seen.find((s) => s.path === '/blob/j1.mp4');
    expect(blob).toMatchObject({ host: cdn!.url });
    expect(blob?.key).toBeUndefined();
  });

  it('refuses a polling URL on a host that is neither the channel nor declared: the task fails, nothing sent there, nothing billed', async () => {
    const { done, seen } = await start(() => 'https://attacker.example.net/v1/elsewhere/j1');
    expect(done).toMatchObject({ status: 'failed', error: { code: 'upstream_url_refused' } });
    expect(seen.map((s) => s.path)).toEqual(['/v1/jobs']);
    expect(await gw!.services.db.selectFrom('usage_ledger').selectAll().execute()).toHaveLength(0);
  });
});
