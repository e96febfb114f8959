import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { clipsChannels, tasksConfig, waitFor } from './kit/tasks.js';

let fake: FakeUpstream | undefined;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  await fake?.close();
  gw = fake = undefined;
});

describe('a task the gateway cannot read', () => {
  it('fails at its first poll and releases its reservation, instead of being polled until it times out', async () => {
    fake = await FakeUpstream.start();
    let polls = 0;
    fake.route((req, res) => {
      if (req.method === 'POST' && req.path === '/clips') return (json(res, 200, { id: 'c1' }), true);
      if (req.method === 'GET' && req.path === '/clips/c1') return (polls++, json(res, 200, { state: 'working', progress: 40 }), true);
      return false;
    });
    // A progress mapping that expects an object where the upstream reports a number: the status answer can never be read.
    gw = await startGateway({ channels: clipsChannels(fake.url, { pollExtra: '      progress: { $merge: ["{{ answer.progress }}"] }\n' }), extraConfig: tasksConfig(fake) });
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
