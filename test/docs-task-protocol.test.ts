import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';
import { acceptedSamples } from './kit/media-samples.js';
import { tasksConfig, waitFor } from './kit/tasks.js';

let fake: FakeUpstream | undefined;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  await fake?.close();
  gw = fake = undefined;
});

/** The protocol, channel and fixture files docs/protocols.md writes in "Writing a task protocol, start to finish", as written. */
function documentedFiles(): [protocol: string, channel: string, fixtures: string] {
  const doc = readFileSync(join(repoRoot, 'docs', 'protocols.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Writing a task protocol, start to finish'));
  const blocks = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]);
  expect(blocks.length).toBeGreaterThanOrEqual(3);
  return [blocks[0], blocks[1], blocks[2]];
}

describe('the task protocol docs/protocols.md writes, start to finish', () => {
  it('loads without a warning and runs a video task to completion, archived and billed from the seconds made', async () => {
    const [protocol, channel, fixtures] = documentedFiles();
    fake = await FakeUpstream.start();
    const video = acceptedSamples.find((s) => s.name === 'video.mp4')!.bytes;
    let polls = 0;
    fake.route((req, res) => {
      if (req.method === 'POST' && req.path === '/v1/renders') return (json(res, 200, { job: 'r-1' }), true);
      if (req.method === 'GET' && req.path === '/v1/renders/r-1') {
        const ready = polls++ > 0;
        json(res, 200, ready ? { state: 'ready', video_url: `${fake!.url}/media/r-1.mp4`, seconds: 5 } : { state: 'rendering', percent: 40 });
        return true;
      }
      if (req.method === 'GET' && req.path === '/media/r-1.mp4') return (res.writeHead(200, { 'content-type': 'video/mp4' }), res.end(video), true);
      return false;
    });
    gw = await startGateway({
      channels: { 'protocols/renders.yaml': protocol, 'protocols/tests/renders.yaml': fixtures, renders: channel.replace('https://api.renders.example', fake.url) },
      extraConfig: tasksConfig(fake),
      env: { RENDERS_API_KEY: 'rk-test' },
    });
    expect(gw.services.config.warnings).toEqual([]);
    const created = await gw.app.inject({ method: 'POST', url: '/api/v1/videos', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'render-1', prompt: 'A lighthouse', seconds: 5 } });
    expect(created.statusCode).toBe(200);
    const read = async () => (await gw!.app.inject({ method: 'GET', url: `/api/v1/videos/${created.json().id}`, headers: { authorization: `Bearer ${gw!.key}` } })).json();
    const done = await waitFor(read, (task) => task.status === 'completed' || task.status === 'failed');
    expect(done).toMatchObject({ status: 'completed', archive_status: 'archived', cost: { amount: 0.4, currency: 'USD' } });
    const submitted = fake.requests.find((r) => r.method === 'POST');
    expect(submitted?.body).toEqual({ prompt: 'A lighthouse', duration: 5 });
    expect(submitted?.headers.authorization).toBe('Bearer rk-test');
  });
});
