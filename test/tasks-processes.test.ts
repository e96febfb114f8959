import { afterEach, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { once } from 'node:events';
import { loadConfig } from '../src/compile/load-config.js';
import { createServices, type Services } from '../src/services.js';
import { buildApp } from '../src/app.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { spawnChildGateway } from './kit/process.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installOpenAIVideos } from './kit/fake-tasks.js';
import { openaiVideoChannel, tasksConfig, waitFor } from './kit/tasks.js';

let fake: FakeUpstream | undefined;
let gw: TestGateway | undefined;
let second: Services | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  await second?.close();
  await gw?.close();
  await fake?.close();
  fake = gw = second = child = undefined;
});

const create = (gw: TestGateway, prompt: string) =>
  gw.app.inject({ method: 'POST', url: '/api/v1/videos', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'sora-2', prompt, seconds: 8 } });
const status = (gw: TestGateway, id: string) => gw.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}`, headers: { authorization: `Bearer ${gw.key}` } }).then((r) => r.json());

describe('tasks across processes', () => {
  it('a completed task bills once, and each poll of it is made by one process, while two gateways share the database', async () => {
    fake = await FakeUpstream.start();
    const videos = installOpenAIVideos(fake, { steps: [10, 20, 30, 40, 50, 60], pollDelayMs: 15, seconds: '8' });
    gw = await startGateway({ channels: { video: openaiVideoChannel(fake.url) }, extraConfig: tasksConfig(fake) });
    second = await createServices(await loadConfig(join(gw.dir, 'config.yaml')));
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push((await create(gw, `Clip ${i}`)).json().id);
    for (const id of ids) await waitFor(() => status(gw!, id), (t) => t.status === 'completed' || t.status === 'failed');
    for (const id of ids) expect((await status(gw, id)).status).toBe('completed');
    expect(videos.maxConcurrentPolls).toBe(1);
    expect(videos.downloads).toBe(6);
    const ledger = await gw.services.db.selectFrom('usage_ledger').selectAll().execute();
    expect(ledger).toHaveLength(6);
    expect(ledger.reduce((sum, row) => sum + Number(row.cost_micros), 0)).toBe(6 * 800_000);
  });

  it('a gateway killed mid-task leaves it to the next one that starts, which finishes and bills it once', async () => {
    fake = await FakeUpstream.start();
    const videos = installOpenAIVideos(fake, { steps: Array(30).fill(0).map((_, i) => i * 3), pollDelayMs: 10, seconds: '8' });
    gw = await startGateway({ channels: { video: openaiVideoChannel(fake.url) }, extraConfig: tasksConfig(fake) });
    const configFile = join(gw.dir, 'config.yaml');
    // The test gateway's runner stands aside: only the child polls until it is killed.
    await gw.services.tasks.stop();
    let url: string;
    ({ child, url } = await spawnChildGateway(configFile));
    const created = await fetch(`${url}/api/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sora-2', prompt: 'Survives a restart', seconds: 8 }) });
    const { id } = (await created.json()) as { id: string };
    await waitFor(async () => [...videos.polls.values()][0] ?? 0, (n) => n >= 3);
    child.kill('SIGKILL');
    await once(child, 'exit');
    const polledBefore = [...videos.polls.values()][0];
    expect((await status(gw, id)).status).toBe('in_progress');

    // The restart: a new gateway on the same config takes the task once the dead one's lease runs out.
    second = await createServices(await loadConfig(configFile));
    const app = await buildApp(second, { logger: false });
    const read = () => app.inject({ method: 'GET', url: `/api/v1/videos/${id}`, headers: { authorization: `Bearer ${gw!.key}` } }).then((r) => r.json());
    const done = await waitFor(read, (t) => t.status === 'completed' || t.status === 'failed');
    expect(done).toMatchObject({ status: 'completed', archive_status: 'archived', cost: { amount: 0.8 } });
    expect([...videos.polls.values()][0]).toBeGreaterThan(polledBefore);
    expect(videos.creates).toBe(1);
    const ledger = await second.db.selectFrom('usage_ledger').selectAll().execute();
    expect(ledger).toHaveLength(1);
    await app.close();
    second = undefined;
  });
});
