// A gateway killed (SIGKILL) in the middle of a batch it runs: the next gateway on the same database takes the batch
// once the dead one's lease runs out and finishes it. No line is lost (every custom_id has its one result) and none is
// billed twice, even a line whose upstream call the dead process had already made or settled.
import { afterEach, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { loadConfig } from '../src/compile/load-config.js';
import { createServices, type Services } from '../src/services.js';
import { buildApp } from '../src/app.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { spawnChildGateway } from './kit/process.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { waitFor } from './kit/tasks.js';

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

const models = `  - id: fake-chat
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0, batch: { inputPerMillion: 1.0, outputPerMillion: 5.0 } }
`;

const LINES = 60;

describe('a batch across a kill -9', () => {
  it('is finished by the next gateway: every line has one result, and the ledger one row per line', async () => {
    fake = await FakeUpstream.start();
    const seen = new Map<string, number>();
    // Each answer takes 40 ms and says which line it answers, so the kill lands with lines in flight.
    fake.route((req, res) => {
      if (req.method !== 'POST' || !req.path.endsWith('/chat/completions')) return false;
      const said = String(req.body.messages.at(-1).content);
      seen.set(said, (seen.get(said) ?? 0) + 1);
      setTimeout(() => json(res, 200, { id: 'chatcmpl-x', object: 'chat.completion', created: 1, model: req.body.model, choices: [{ index: 0, message: { role: 'assistant', content: `echo ${said}` }, finish_reason: 'stop', logprobs: null }], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } }), 40);
      return true;
    });
    gw = await startGateway({
      channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) },
      extraConfig: 'tasks:\n  tickMilliseconds: 20\n  leaseSeconds: 1\n  batches: { linesPerTick: 4, inFlightPerChannel: 2 }\n',
    });
    const configFile = join(gw.dir, 'config.yaml');
    // The test gateway's runners stand aside: only the child runs the batch until it is killed.
    await gw.services.batches.stop();
    let url: string;
    ({ child, url } = await spawnChildGateway(configFile));
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${url}/v1`, maxRetries: 0 });
    const ids = Array.from({ length: LINES }, (_, i) => `line-${String(i).padStart(2, '0')}`);
    const jsonl = ids.map((id) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'fake-chat', max_tokens: 20, messages: [{ role: 'user', content: id }] } }));
    const file = await client.files.create({ file: await toFile(Buffer.from(jsonl.join('\n') + '\n'), 'input.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

    await waitFor(async () => seen.size, (n) => n >= 15);
    child.kill('SIGKILL');
    await once(child, 'exit');
    const sentBefore = seen.size;
    expect(sentBefore).toBeLessThan(LINES);

    // The restart: a new gateway on the same config takes the batch once the dead one's lease has run out.
    second = await createServices(await loadConfig(configFile));
    const app = await buildApp(second, { logger: false });
    const read = () => app.inject({ method: 'GET', url: `/v1/batches/${batch.id}`, headers: { authorization: `Bearer ${gw!.key}` } }).then((r) => r.json());
    const done = await waitFor(read, (b) => ['completed', 'failed', 'expired', 'cancelled'].includes(b.status), 60_000);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: LINES, completed: LINES, failed: 0 } });

    const output = await app.inject({ method: 'GET', url: `/v1/files/${done.output_file_id}/content`, headers: { authorization: `Bearer ${gw.key}` } });
    const results = output.body.trim().split('\n').map((l) => JSON.parse(l));
    expect(results.map((r) => r.custom_id)).toEqual(ids);
    for (const r of results) expect(r.response.body.choices[0].message.content).toBe(`echo ${r.custom_id}`);
    // Every line reached the upstream; a line in flight at the kill may have been sent twice, but is billed once.
    expect(seen.size).toBe(LINES);
    await second.spend.commitQueued?.();
    const ledger = await second.db.selectFrom('usage_ledger').select(['request_id', 'cost_micros']).where('request_id', 'like', `${batch.id}:%`).execute();
    expect(ledger).toHaveLength(LINES);
    expect(new Set(ledger.map((row) => row.request_id)).size).toBe(LINES);
    expect(ledger.every((row) => Number(row.cost_micros) === 47)).toBe(true);
    // Closing the app closes its services.
    await app.close();
    second = undefined;
  }, 120_000);
});
