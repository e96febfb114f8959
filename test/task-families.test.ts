// A task family added by files alone (a catalogue entry of flow `task`, a request schema, a protocol's task and a channel;
// no TypeScript): music generation, asynchronous, billed per second of audio the result reports. Through HTTP against a
// loopback fake upstream: created at once as a `music.task`, polled, archived, billed from the result's usage, capped
// (a key capped at exactly N tasks admits N, then 402, though each task used more seconds than it reserved), scoped.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/base/errors.js';
import { loadConfig } from '../src/compile/load-config.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { acceptedSamples } from './kit/media-samples.js';
import { tasksConfig, waitFor } from './kit/tasks.js';
import { newAdminToken } from '../src/admin/auth.js';

const ops = newAdminToken();

/** The operator's files, as docs/endpoints.md writes them ("A task family"). */
export const musicFamily = {
  catalogue: `- name: music-create
  modelKind: music
  method: [POST]
  path: /v1/music
  scope: music.generate
  requestSchema: requests/music
  bodyLimit: 65536
  handler: pipeline
  pipeline:
    flow: task
    task:
      object: music.task
      idPrefix: music
      purpose: music_generation
      bill: { unit: audioSeconds, price: units, reserve: { field: seconds, limit: maxSeconds, default: 30 } }

- name: music-retrieve
  method: [GET]
  path: /v1/music/:music_id
  scope: music.generate
  handler: tasks-retrieve
  options: { object: music.task }

- name: music-content
  method: [GET]
  path: /v1/music/:music_id/content
  scope: music.generate
  handler: tasks-content
  options: { object: music.task }
`,
  schema: JSON.stringify({
    $id: 'requests/music',
    type: 'object',
    additionalProperties: false,
    required: ['model', 'prompt'],
    properties: { model: { type: 'string', minLength: 1 }, prompt: { type: 'string', minLength: 1, maxLength: 4000 }, seconds: { type: 'integer', minimum: 1, maximum: 600 } },
  }),
  protocol: `id: songs
operations:
  compose: { path: /songs }
  song: { method: GET, path: "/songs/{{ upstream_id }}", encoding: none }
tasks:
  song:
    kind: music
    submit: { operation: compose, request: { model: "{{ model }}", prompt: "{{ body.prompt }}", duration: "{{ body.seconds }}" }, id: "{{ answer.id }}" }
    poll:
      operation: song
      status: "{{ answer.state }}"
      statusMap: { working: in_progress, done: completed, failed: failed }
    result:
      url: "{{ answer.audio_url }}"
      usage: { audioSeconds: "{{ answer.duration }}" }
`,
  /** $0.01 a second of audio, at most 60 seconds a song. */
  channel: (baseUrl: string) => `id: songs
protocol: songs
baseUrl: ${baseUrl}
models:
  - id: tune-1
    kind: music
    media: { maxSeconds: 60 }
    price: { units: { audioSeconds: { each: 0.01, reserve: { limit: maxSeconds } } } }
`,
};

/** What the fake reports as the song's duration (seconds), whatever was asked for. */
let duration = 25;
const audio = acceptedSamples.find((sample) => sample.name === 'audio.mp3')!.bytes;
let fake: FakeUpstream;
let gw: TestGateway;
let songs = 0;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  const made = new Map<string, number>();
  fake.route((req, res) => {
    if (req.method === 'POST' && req.path === '/songs') {
      const id = `s${++songs}`;
      made.set(id, duration);
      return (json(res, 200, { id }), true);
    }
    const song = /^\/songs\/(s\d+)$/.exec(req.path);
    if (req.method === 'GET' && song) return (json(res, 200, { state: 'done', duration: made.get(song[1]), audio_url: `${fake.url}/audio/${song[1]}.mp3` }), true);
    if (req.method === 'GET' && req.path.startsWith('/audio/')) {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': audio.length });
      res.end(audio);
      return true;
    }
    return false;
  });
  gw = await startGateway({
    listen: true,
    extraConfig: `endpoints:\n  catalogueDir: ./catalogue\n  schemasDir: ./schemas\nadmin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n${tasksConfig(fake).replace('allowHosts: [', 'allowHosts: ["127.0.0.1:9", ')}`,
    files: { 'catalogue/music.yaml': musicFamily.catalogue, 'schemas/music.json': musicFamily.schema },
    protocols: { 'songs.yaml': musicFamily.protocol },
    channels: { songs: musicFamily.channel(fake.url) },
  });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

async function call(method: string, path: string, key = gw.key, body?: unknown): Promise<{ status: number; body: any; bytes: Buffer }> {
  const res = await fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text, bytes };
}
/** Asks for a song of `seconds` (null: none said). */
const compose = (key = gw.key, seconds: number | null = 20) => call('POST', '/v1/music', key, { model: 'tune-1', prompt: 'A waltz for a rainy day', ...(seconds === null ? {} : { seconds }) });
const finished = (r: { body: any }) => r.body.status === 'completed' || r.body.status === 'failed';
const settle = (id: string, key = gw.key) => waitFor(() => call('GET', `/v1/music/${id}`, key), finished);
/** The ledger rows of a task's charge (its reservation, as the task row holds it). */
async function ledger(taskId: string) {
  const row = await gw.services.db.selectFrom('tasks').select('charge').where('id', '=', taskId).executeTakeFirstOrThrow();
  const { id } = JSON.parse(row.charge) as { id: string };
  return gw.services.db.selectFrom('usage_ledger').selectAll().where('reservation_id', '=', id).execute();
}

describe('a task family added by catalogue files alone (music, per second of audio)', () => {
  it('answers a music.task at once, completes it with the archived audio and bills the seconds the result reports', async () => {
    duration = 25;
    const created = await compose();
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ object: 'music.task', status: 'submitting', model: 'tune-1', seconds: '20' });
    expect(created.body.id).toMatch(/^music_[0-9a-f]{28}$/);
    const done = await settle(created.body.id);
    // 25 seconds at $0.01, though 20 were reserved: usage the model can make is charged in full.
    expect(done.body).toMatchObject({ object: 'music.task', status: 'completed', archive_status: 'archived', cost: { amount: 0.25, currency: 'USD' } });
    const content = await call('GET', `/v1/music/${created.body.id}/content`);
    expect(content.status).toBe(200);
    expect(content.bytes.equals(audio)).toBe(true);
    const file = await call('GET', `/v1/files/${done.body.file_id}`);
    expect(file.body).toMatchObject({ purpose: 'music_generation' });
    // The generic task read serves it too, with the family's scope.
    expect((await call('GET', `/v1/tasks/${created.body.id}`)).body).toMatchObject({ object: 'music.task', status: 'completed' });
  });

  it('sets off its own webhook events: music.completed reaches an endpoint registered without naming events', async () => {
    const admin = (method: 'GET' | 'POST', url: string, payload?: object) => gw.app.inject({ method, url: `/admin/v1${url}`, headers: { authorization: `Bearer ${ops.token}` }, ...(payload ? { payload } : {}) });
    const hook = (await admin('POST', `/workspaces/${gw.workspace.id}/webhooks`, { url: 'https://127.0.0.1:9/music' })).json();
    expect(hook.events).toEqual(expect.arrayContaining(['music.completed', 'music.failed', 'video.completed', 'batch.completed']));
    expect(hook.events).not.toContain('guardrail.blocked');
    duration = 12;
    const created = await compose();
    expect((await settle(created.body.id)).body.status).toBe('completed');
    const deliveries = await gw.services.db.selectFrom('webhook_deliveries').selectAll().where('subject_id', '=', created.body.id).execute();
    expect(deliveries.map((d) => d.event_type)).toEqual(['music.completed']);
    // A family's event may be named before the catalogue declares it; a malformed one is refused.
    expect((await admin('POST', `/workspaces/${gw.workspace.id}/webhooks`, { url: 'https://127.0.0.1:9/later', events: ['podcast.completed'] })).statusCode).toBe(201);
    const bad = await admin('POST', `/workspaces/${gw.workspace.id}/webhooks`, { url: 'https://127.0.0.1:9/bad', events: ['music.done'] });
    expect(bad.statusCode).toBe(400);
  });

  it('reserves the seconds asked for (else the model\'s most) and refuses more than the model makes, leaving no task', async () => {
    const tooLong = await compose(gw.key, 90);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ param: 'seconds', message: expect.stringContaining('at most 60') });
    // 60 seconds reserved when none are asked for: a key with $0.59 left is refused before anything is sent.
    const before = songs;
    const key = await gw.newKey({ spendCapMicros: 590_000 });
    expect((await compose(key, null)).status).toBe(402);
    expect((await compose(key, 59)).status).toBe(200);
    // Only the admitted one reaches the vendor (its submit runs in the background).
    expect(await waitFor(async () => songs, (n) => n >= before + 1)).toBe(before + 1);
  });

  it('gives a key capped at exactly 3 tasks 3, then 402, though each task used more seconds than it reserved', async () => {
    duration = 25; // 20 reserved ($0.20), 25 charged ($0.25)
    const key = await gw.newKey({ spendCapMicros: 3 * 250_000 });
    const statuses: number[] = [];
    while (statuses.at(-1) !== 402 && statuses.length < 6) {
      const created = await compose(key);
      statuses.push(created.status);
      if (created.status === 200) expect((await settle(created.body.id, key)).body.cost).toEqual({ amount: 0.25, currency: 'USD' });
    }
    expect(statuses).toEqual([200, 200, 200, 402]);
  });

  it('charges the reservation, no overage, for more seconds than the model can make', async () => {
    duration = 5000;
    const created = await compose(gw.key, 10);
    const done = await settle(created.body.id);
    expect(done.body).toMatchObject({ status: 'completed', cost: { amount: 0.1 } });
    expect(await ledger(created.body.id)).toEqual([expect.objectContaining({ model: 'tune-1', kind: 'music', cost_micros: 100_000, overage_micros: 0 })]);
  });

  it('needs the family\'s scope to create or read its tasks', async () => {
    duration = 25;
    const other = await gw.newKey({ scopes: ['llm.chat'] });
    expect((await compose(other)).status).toBe(403);
    const created = await compose();
    expect((await call('GET', `/v1/tasks/${created.body.id}`, other)).status).toBe(403);
    await settle(created.body.id);
  });
});

describe('check-config on task families and flows', () => {
  /** Writes `files` (paths under the gateway's folder) and loads its config: the problems, or the warnings when it loads. */
  async function load(files: Record<string, string>): Promise<{ problems: string[]; warnings: string[] }> {
    for (const [path, text] of Object.entries(files)) writeFileSync(join(gw.dir, path), text);
    try {
      const config = await loadConfig(join(gw.dir, 'config.yaml'), { env: { DATABASE_URL: process.env.DATABASE_URL } });
      return { problems: [], warnings: config.warnings };
    } catch (err) {
      return { problems: (err as ConfigError).problems ?? [String(err)], warnings: [] };
    } finally {
      for (const path of Object.keys(files)) rmSync(join(gw.dir, path));
    }
  }

  it('refuses a protocol task of a kind no task entry serves, at its file:line:col', async () => {
    const protocol = musicFamily.protocol.replace('id: songs', 'id: podcasts').replace('kind: music', 'kind: podcast');
    const { problems } = await load({ 'channels/protocols/podcasts.yaml': protocol });
    expect(problems).toEqual([expect.stringMatching(/podcasts\.yaml:\d+:\d+ \/tasks\/song\/kind task "song" is of kind "podcast", but no catalogue entry of flow "task" for that kind is served at its own path/)]);
  });

  it('refuses a task entry with no task section, and an entry of another flow with no operation', async () => {
    const entries = `- name: broken-task\n  modelKind: music\n  method: [POST]\n  path: /v1/broken\n  handler: pipeline\n  pipeline: { flow: task }\n- name: broken-relay\n  modelKind: music\n  method: [POST]\n  path: /v1/broken-relay\n  handler: pipeline\n  pipeline: { flow: relay }\n`;
    const { problems } = await load({ 'catalogue/broken.yaml': entries });
    expect(problems).toEqual([
      expect.stringMatching(/catalogue\/broken\.yaml:6:13 \/0\/pipeline endpoint "broken-task" runs the task flow: declare its family in "task"/),
      expect.stringMatching(/catalogue\/broken\.yaml:12:13 \/1\/pipeline endpoint "broken-relay" names no operation/),
    ]);
  });

  it('reads a pipeline.dialect that names the flow (the old spelling) as the flow, with a deprecation warning', async () => {
    const entry = `- name: old-spelling\n  modelKind: hum\n  method: [POST]\n  path: /v1/old-spelling\n  scope: music.generate\n  handler: pipeline\n  pipeline: { dialect: relay, operation: compose }\n`;
    const { problems, warnings } = await load({ 'catalogue/old.yaml': entry });
    expect(problems).toEqual([]);
    expect(warnings).toContainEqual(expect.stringMatching(/catalogue\/old\.yaml:7:24 \/0\/pipeline\/dialect deprecated: "dialect" names the client's wire dialect, no longer the flow; write "flow: relay"/));
  });
});
