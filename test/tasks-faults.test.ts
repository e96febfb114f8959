import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { tasksConfig, waitFor } from './kit/tasks.js';

let fake: FakeUpstream | undefined;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  await fake?.close();
  gw = fake = undefined;
});

// A task API whose progress mapping expects an object where the upstream reports a number: the status answer can never be read.
const protocol = `id: clips
operations:
  create: { path: /clips }
  clip: { method: GET, path: "/clips/{{ upstream_id }}", encoding: none }
tasks:
  video:
    kind: video
    submit: { operation: create, request: { prompt: "{{ body.prompt }}" }, id: "{{ answer.id }}" }
    poll:
      operation: clip
      status: "{{ answer.state }}"
      statusMap: { working: in_progress, done: completed, error: failed }
      progress: { $merge: ["{{ answer.progress }}"] }
    result: { url: "{{ answer.url }}" }
`;

describe('a task the gateway cannot read', () => {
  it('fails at its first poll and releases its reservation, instead of being polled until it times out', async () => {
    fake = await FakeUpstream.start();
    let polls = 0;
    fake.route((req, res) => {
      if (req.method === 'POST' && req.path === '/clips') return (json(res, 200, { id: 'c1' }), true);
      if (req.method === 'GET' && req.path === '/clips/c1') return (polls++, json(res, 200, { state: 'working', progress: 40 }), true);
      return false;
    });
    const channel = `id: clips\nprotocol: clips\nbaseUrl: ${fake.url}\nmodels:\n  - id: clip-1\n    kind: video\n    media: { maxSeconds: 8 }\n    price: { perVideoSecond: 0.1 }\n`;
    gw = await startGateway({ channels: { 'protocols/clips.yaml': protocol, clips: channel }, extraConfig: tasksConfig(fake) });
    const created = await gw.app.inject({ method: 'POST', url: '/api/v1/videos', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'clip-1', prompt: 'A dot', seconds: 4 } });
    expect(created.statusCode).toBe(200);
    const read = async () => (await gw!.app.inject({ method: 'GET', url: `/api/v1/videos/${created.json().id}`, headers: { authorization: `Bearer ${gw!.key}` } })).json();
    const done = await waitFor(read, (task) => task.status === 'completed' || task.status === 'failed');
    expect(done).toMatchObject({ status: 'failed', error: { code: 'translation_failed' } });
    expect(polls).toBe(1);
    expect(await gw.services.db.selectFrom('usage_ledger').selectAll().execute()).toHaveLength(0);
    expect(await gw.services.db.selectFrom('spend_reservations').selectAll().execute()).toHaveLength(0);
  });
});
