// What guardrails leave behind: each verdict and its timing on the request-log row, counters per guardrail and verdict on
// /metrics, a guardrail.blocked webhook event per block; and, searched after the requests, no request-log row, captured
// body, webhook body, log line or metric holding any value a guardrail matched.
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { readBodies } from '../src/request-logs/bodies.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { captureLogs, type LogCapture } from './kit/log-capture.js';
import { WebhookReceiver } from './kit/webhook-receiver.js';

const SECRETS = {
  email: 'jane.doe@example.com',
  card: '4111 1111 1111 1111',
  key: 'sk-proj-Abcdefghijklmnopqrstuvwx0123456789',
  answerKey: 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB',
  forbidden: 'TOP-SECRET-4242',
  transcriptEmail: 'spoken.address@example.net',
  transcriptKey: 'sk-proj-Spokenkeyspokenkey0123456789abcd',
  name: 'Alice Smith',
};

const GUARDRAILS = `
- id: pii-redact
  kind: pattern
  detectors: [email, payment-card]
  action: redact
- id: secrets-block
  kind: pattern
  detectors: [secret]
  action: block
- id: answer-secrets
  kind: pattern
  detectors: [secret]
  stage: [output, stream]
  action: redact
- id: names-out
  kind: http
  stage: output
  http: { url: "{{guard}}/check" }
  action: redact
- id: stream-stop
  kind: pattern
  patterns: [{ name: forbidden, regex: 'TOP-SECRET-[0-9]+' }]
  stage: [stream]
  action: block
`;
const ROUTES = `
- id: safe
  targets: [{ model: gpt-fake }]
  guardrails: [pii-redact, secrets-block, answer-secrets, stream-stop]
- id: safe-claude
  targets: [{ model: claude-fake }]
  guardrails: [pii-redact, secrets-block]
- id: safe-audio
  targets: [{ model: whisper-fake }]
  guardrails: [pii-redact, secrets-block]
- id: safe-names
  targets: [{ model: gpt-fake }]
  guardrails: [names-out]
`;

const admin = newAdminToken();
let fake: FakeUpstream;
let claudeFake: FakeUpstream;
let receiver: WebhookReceiver;
let guard: FakeUpstream;
/** What the fake transcription model hears. */
let transcript = '';
let gw: TestGateway;
let logs: LogCapture;
let openai: OpenAI;

beforeAll(async () => {
  [fake, claudeFake, receiver, guard] = await Promise.all([FakeUpstream.start(), FakeUpstream.start(), WebhookReceiver.start(), FakeUpstream.start()]);
  fake.route((req, res) => {
    if (!req.path.endsWith('/audio/transcriptions')) return false;
    json(res, 200, { text: transcript, usage: { type: 'duration', seconds: 3 } });
    return true;
  });
  // The operator's guard service: redacts the name wherever it is.
  guard.route((req, res) => {
    const { texts } = req.body as { texts: string[] };
    const at = (text: string) => text.indexOf(SECRETS.name);
    json(res, 200, { verdict: 'redact', redactions: texts.flatMap((text, index) => (at(text) >= 0 ? [{ text: index, start: at(text), end: at(text) + SECRETS.name.length, label: 'name' }] : [])) });
    return true;
  });
  logs = captureLogs('debug');
  gw = await startGateway({
    channels: {
      gpt: `id: gpt\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: gpt-fake\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n  - id: whisper-fake\n    kind: transcription\n    media: { maxAudioSeconds: 1800 }\n    price: { perMinute: 0.006 }\n`,
      claude: `id: claude\nprotocol: anthropic-messages\nbaseUrl: ${claudeFake.url}/v1\ncredential:\n  env: FAKE_ANTHROPIC_KEY\nmodels:\n  - id: claude-fake\n    kind: chat\n    price: { inputPerMillion: 3, outputPerMillion: 4 }\n`,
    },
    files: { 'routes/main.yaml': ROUTES, 'guardrails/main.yaml': GUARDRAILS.replace('{{guard}}', guard.url) },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' },
    extraConfig: [
      'requestLogs:\n  captureBodies: true\n',
      `network:\n  allowHosts: ["${receiver.host}"]\n`,
      'webhooks:\n  tickMilliseconds: 10\n',
      `admin:\n  tokens:\n    - id: ops\n      sha256: ${admin.sha256}\n`,
    ].join(''),
    logger: logs.logger,
    listen: true,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
  const res = await gw.app.inject({ method: 'POST', url: `/admin/v1/workspaces/${gw.workspace.id}/webhooks`, headers: { authorization: `Bearer ${admin.token}` }, payload: { url: `${receiver.url}/hooks`, events: ['guardrail.blocked'] } });
  expect(res.statusCode, res.body).toBe(201);
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([fake, claudeFake, receiver, guard].map((f) => f?.close()));
});

/**
 * Sends the eight requests the checks below read: a redaction, two input blocks, an answer redacted and a stream cut;
 * a transcript redacted and one blocked (input guardrails after the fact); an answer an http guard redacted.
 */
async function exercise(): Promise<void> {
  fake.chat = { text: 'Noted.', usage: { prompt_tokens: 10, completion_tokens: 5 } };
  await openai.chat.completions.create({ model: 'safe', messages: [{ role: 'user', content: `Mail ${SECRETS.email}, card ${SECRETS.card}` }] });
  await expect(openai.chat.completions.create({ model: 'safe', messages: [{ role: 'user', content: `key ${SECRETS.key}` }] })).rejects.toThrow(/secrets-block/);
  const anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
  await expect(anthropic.messages.create({ model: 'safe-claude', max_tokens: 8, messages: [{ role: 'user', content: `key ${SECRETS.key}` }] })).rejects.toThrow(/secrets-block/);
  fake.chat = { text: `Use ${SECRETS.answerKey} for it.`, usage: { prompt_tokens: 10, completion_tokens: 5 } };
  await openai.chat.completions.create({ model: 'safe', messages: [{ role: 'user', content: 'the key?' }] });
  fake.chat = { text: `${'Harmless words. '.repeat(30)}${SECRETS.forbidden} after.`, usage: { prompt_tokens: 10, completion_tokens: 5 } };
  const stream = await openai.chat.completions.create({ model: 'safe', stream: true, messages: [{ role: 'user', content: 'go' }] });
  await expect(
    (async () => {
      for await (const chunk of stream) void chunk;
    })(),
  ).rejects.toThrow(/stream-stop/);
  const audio = () => toFile(Buffer.from('ID3 fake mp3 bytes'), 'meeting.mp3', { type: 'audio/mpeg' });
  transcript = `Write to ${SECRETS.transcriptEmail} please.`;
  expect((await openai.audio.transcriptions.create({ model: 'safe-audio', file: await audio() })).text).toBe('Write to [REDACTED:email] please.');
  transcript = `The key is ${SECRETS.transcriptKey}.`;
  await expect(openai.audio.transcriptions.create({ model: 'safe-audio', file: await audio() })).rejects.toThrow(/secrets-block/);
  fake.chat = { text: `Ask ${SECRETS.name} about it.`, usage: { prompt_tokens: 10, completion_tokens: 5 } };
  const named = await openai.chat.completions.create({ model: 'safe-names', messages: [{ role: 'user', content: 'who?' }] });
  expect(named.choices[0].message.content).toBe('Ask [REDACTED:name] about it.');
}

async function rows(count: number): Promise<Record<string, any>[]> {
  for (let i = 0; i < 400; i++) {
    await gw.services.requestLogs.commitQueued();
    const found = await gw.services.db.selectFrom('request_logs').selectAll().orderBy('created_at', 'asc').execute();
    if (found.length >= count) return found as Record<string, any>[];
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the request-log rows did not arrive');
}

describe('guardrail evidence', () => {
  let logged: Record<string, any>[];

  beforeAll(async () => {
    await exercise();
    logged = await rows(8);
  }, 60_000);

  it('request-log rows carry each verdict with its timing and what matched, counted by detector', () => {
    const verdicts = logged.map((r) => (r.guardrails ? JSON.parse(r.guardrails) : null));
    expect(verdicts[0]).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'pii-redact', stage: 'input', verdict: 'redact', matches: { email: 1, 'payment-card': 1 } }), expect.objectContaining({ id: 'secrets-block', stage: 'input', verdict: 'pass' })]));
    expect(verdicts[1]).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'secrets-block', stage: 'input', verdict: 'block', matches: { secret: 1 } })]));
    expect(logged[1]).toMatchObject({ status: 400, error_code: 'guardrail_blocked', cost_micros: 0 });
    expect(verdicts[3]).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'answer-secrets', stage: 'output', verdict: 'redact', matches: { secret: 1 } })]));
    expect(verdicts[4]).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'stream-stop', stage: 'stream', verdict: 'block', matches: { forbidden: 1 } })]));
    for (const list of verdicts.filter(Boolean)) for (const v of list) expect(typeof v.ms).toBe('number');
    // A cut stream is charged what the upstream reported (or its reservation), never nothing.
    expect(Number(logged[4].cost_micros)).toBeGreaterThan(0);
  });

  it('filters the request log by verdict through the admin API (the Logs page and the CLI read the same filter)', async () => {
    const list = (query: string) => gw.app.inject({ method: 'GET', url: `/admin/v1/workspaces/${gw.workspace.id}/requests?${query}`, headers: { authorization: `Bearer ${admin.token}` } });
    const blocked = (await list('guardrail=block')).json().data as { request_id: string }[];
    expect(blocked.map((r) => r.request_id).sort()).toEqual([logged[1].request_id, logged[2].request_id, logged[4].request_id, logged[6].request_id].sort());
    const redacted = (await list('guardrail=redact')).json().data as { request_id: string }[];
    expect(redacted.map((r) => r.request_id).sort()).toEqual([logged[0].request_id, logged[3].request_id, logged[5].request_id, logged[7].request_id].sort());
    const bad = await list('guardrail=pass');
    expect(bad.statusCode).toBe(400);
  });

  it('counts verdicts per guardrail, stage and verdict on /metrics', async () => {
    const text = await gw.services.metrics.scrape();
    expect(text).toContain('gateway_guardrail_verdicts_total{guardrail="secrets-block",stage="input",verdict="block"} 3');
    expect(text).toContain('gateway_guardrail_verdicts_total{guardrail="pii-redact",stage="input",verdict="redact"} 2');
    expect(text).toContain('gateway_guardrail_verdicts_total{guardrail="stream-stop",stage="stream",verdict="block"} 1');
    expect(text).toMatch(/gateway_guardrail_seconds_count\{guardrail="secrets-block",stage="input"\} \d+/);
  });

  it('sends a guardrail.blocked webhook event per block, naming the guardrail and the request', async () => {
    const hooks = await receiver.waitFor(4);
    const events = hooks.map((h) => JSON.parse(h.body) as { type: string; data: Record<string, unknown> });
    expect(events.map((e) => e.type)).toEqual(['guardrail.blocked', 'guardrail.blocked', 'guardrail.blocked', 'guardrail.blocked']);
    expect(events.map((e) => `${e.data.guardrail}/${e.data.stage}`).sort()).toEqual(['secrets-block/input', 'secrets-block/input', 'secrets-block/input', 'stream-stop/stream']);
    expect(events.map((e) => e.data.request_id)).toEqual(expect.arrayContaining([logged[1].request_id, logged[4].request_id]));
  });

  it('writes nothing a guardrail matched in clear: request-log rows, captured bodies, webhook bodies, log lines, metrics', async () => {
    const bodies = await Promise.all(logged.map((r) => readBodies(gw.services.blobs, r.body_key)));
    const deliveries = await gw.services.db.selectFrom('webhook_deliveries').select('payload').execute();
    const everything = [JSON.stringify(logged), JSON.stringify(bodies), JSON.stringify(deliveries), JSON.stringify(receiver.received ?? []), JSON.stringify(logs.lines), await gw.services.metrics.scrape()].join('\n');
    expect(bodies.filter(Boolean).length).toBe(8);
    for (const [name, value] of Object.entries(SECRETS)) expect(everything.includes(value), `${name} found in clear`).toBe(false);
    // What the upstream saw of the redacted request (the one place its text may be): the marks, not the values.
    expect(JSON.stringify(bodies[0])).toContain('[REDACTED:email]');
  });
});
