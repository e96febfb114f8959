// A gateway killed (kill -9) in the middle of a capped request: the gateway that starts next on the same database
// releases the reservation the dead one left at once, instead of refusing the key until billing.reservationTtlSeconds.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { loadConfig } from '../src/compile/load-config.js';
import { createServices, type Services } from '../src/services.js';
import { buildApp } from '../src/app.js';
import { startBackgroundJobs } from '../src/jobs.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';
import { spawnChildGateway } from './kit/process.js';

let fake: FakeUpstream | undefined;
let gw: TestGateway | undefined;
let restarted: Services | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  await restarted?.close();
  await gw?.close();
  await fake?.close();
  fake = gw = restarted = child = undefined;
});

const completion = { id: 'chatcmpl-k', object: 'chat.completion', created: 1, model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };

describe('a gateway killed mid-request', () => {
  it('leaves no hold on the cap once the next gateway starts (the capped key is served again at once), while a replica still running keeps its own', async () => {
    fake = await FakeUpstream.start();
    let hold = true;
    const held: (() => void)[] = [];
    fake.route(async (req, res) => {
      if (!req.path.endsWith('/chat/completions')) return false;
      // The first call never gets an answer before its gateway is killed.
      if (hold) await new Promise<void>((resolve) => held.push(resolve));
      json(res, 200, completion);
      return true;
    });
    gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.flatChat }) } });
    // One request's worth: one cent.
    const key = await gw.newKey({ spendCapMicros: 10_000 });
    const configFile = join(gw.dir, 'config.yaml');
    let url: string;
    ({ child, url } = await spawnChildGateway(configFile));
    const body = JSON.stringify({ model: 'flat-chat', messages: [{ role: 'user', content: 'hi' }] });
    void fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body }).catch(() => undefined);
    await expect.poll(() => held.length).toBe(1);
    // Another replica, alive, with a capped request in flight of its own.
    const otherKey = await gw.newKey({ spendCapMicros: 10_000 });
    const alive = gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${otherKey}` }, payload: JSON.parse(body) });
    await expect.poll(() => held.length).toBe(2);
    child.kill('SIGKILL');
    await once(child, 'exit');
    const chat = (app: { inject: TestGateway['app']['inject'] }) => app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: JSON.parse(body) });
    // The dead gateway's reservation holds the whole cap.
    expect((await chat(gw.app)).statusCode).toBe(402);

    // The restart: a new gateway on the same config, started as `npm start` starts it (its background jobs too).
    hold = false;
    restarted = await createServices(await loadConfig(configFile));
    const app = await buildApp(restarted, { logger: false });
    await startBackgroundJobs(restarted, pino({ level: 'silent' }) as never);
    const res = await chat(app);
    expect(res.statusCode, res.body).toBe(200);
    expect((await chat(app)).statusCode).toBe(402);
    const other = await app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${otherKey}` }, payload: JSON.parse(body) });
    expect(other.statusCode).toBe(402);
    for (const release of held) release();
    expect((await alive).statusCode).toBe(200);
    await app.close();
    restarted = undefined;
  }, 60_000);
});
