// A task's submit goes through the pipeline's send stage, yet is sent once: a channel's retries never repeat it (the
// upstream may have made the task before its answer failed); the task fails and nothing is billed.
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

describe('a task submit on a channel with retries', () => {
  it('is sent once when the upstream answers 503: the task fails, unbilled, its reservation gone', async () => {
    fake = await FakeUpstream.start();
    let submits = 0;
    fake.route((req, res) => {
      if (req.method === 'POST' && req.path === '/clips') return (submits++, json(res, 503, { error: { message: 'busy' } }), true);
      return false;
    });
    gw = await startGateway({ channels: clipsChannels(fake.url, { channelExtra: 'retries: { max: 2, minDelayMs: 0, budget: 1, burst: 10 }\n' }), extraConfig: tasksConfig(fake) });
    const created = await gw.app.inject({ method: 'POST', url: '/api/v1/videos', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'clip-1', prompt: 'A dot', seconds: 4 } });
    expect(created.statusCode).toBe(200);
    expect(created.json()).toMatchObject({ status: 'submitting', object: 'video.task' });
    const read = async () => (await gw!.app.inject({ method: 'GET', url: `/api/v1/videos/${created.json().id}`, headers: { authorization: `Bearer ${gw!.key}` } })).json();
    const done = await waitFor(read, (task) => task.status === 'completed' || task.status === 'failed');
    expect(done.status).toBe('failed');
    expect(submits).toBe(1);
    expect(await gw.services.db.selectFrom('usage_ledger').selectAll().execute()).toHaveLength(0);
    expect(await gw.services.db.selectFrom('spend_reservations').selectAll().execute()).toHaveLength(0);
  });
});
