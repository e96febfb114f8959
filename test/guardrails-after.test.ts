// Guardrails that judge what comes back, through HTTP with the official openai SDK: `moderation` and `http` guardrails
// at the output stage (the answer's texts sent to a moderation model of the catalogue, billed, or to the operator's
// guard service, awaited before the answer goes out: a block ends it as filtered, a redaction reaches the client, a
// flag is recorded; a request that asks to stream is refused where a blocking one applies), and a transcript's text
// checked by the input guardrails after the fact (block: the typed 400, the transcription still charged; redact: the
// client gets the redacted text, as JSON and as text; flag: recorded). Nothing matched reaches a request-log row.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream, json, type RecordedRequest } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

const NAME = 'Alice Smith';
const EMAIL = 'alice.smith@example.org';
const CARD = '4111 1111 1111 1111';
const SECRET = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';

/** What the fake moderation model scores: harassment by the insults in the text. */
const scoresOf = (text: string) => ({ harassment: Math.min(1, (text.match(/\bidiot\b/g) ?? []).length * 0.3), violence: 0 });

/** The fake guard service: redacts the name, blocks a forbidden topic. */
const SERVICES: Record<string, (texts: string[]) => unknown> = {
  'names-out': (texts) => ({
    verdict: texts.some((t) => t.includes(NAME)) ? 'redact' : 'allow',
    redactions: texts.flatMap((text, index) => (text.includes(NAME) ? [{ text: index, start: text.indexOf(NAME), end: text.indexOf(NAME) + NAME.length, label: 'name' }] : [])),
  }),
  'policy-out': (texts) => (texts.some((t) => /forbidden topic/i.test(t)) ? { verdict: 'block', labels: ['policy'] } : { verdict: 'allow' }),
};

const GUARDRAILS = `
- id: civil-out
  kind: moderation
  stage: output
  moderation: { model: mod-fake, thresholds: { harassment: 0.5 } }
  action: block
- id: civil-out-flag
  kind: moderation
  stage: output
  moderation: { model: mod-fake, threshold: 0.4 }
  action: flag
- id: names-out
  kind: http
  stage: output
  http: { url: "{{guard}}/check" }
  action: redact
- id: policy-out
  kind: http
  stage: output
  http: { url: "{{guard}}/check" }
  action: block
- id: pii-transcript
  kind: pattern
  detectors: [email, payment-card]
  action: redact
- id: secret-transcript
  kind: pattern
  detectors: [secret]
  action: block
- id: watch-transcript
  kind: pattern
  detectors: [email]
  action: flag
`;
const ROUTES = `
- id: civil-chat
  targets: [{ model: gpt-fake }]
  guardrails: [civil-out]
- id: watched-chat
  targets: [{ model: gpt-fake }]
  guardrails: [civil-out-flag]
- id: names-chat
  targets: [{ model: gpt-fake }]
  guardrails: [names-out]
- id: policy-chat
  targets: [{ model: gpt-fake }]
  guardrails: [policy-out]
- id: whisper-redact
  targets: [{ model: whisper-fake }]
  guardrails: [pii-transcript]
- id: whisper-block
  targets: [{ model: whisper-fake }]
  guardrails: [secret-transcript]
- id: whisper-flag
  targets: [{ model: whisper-fake }]
  guardrails: [watch-transcript]
`;
const MODERATION_MICROS = 2000;

let fake: FakeUpstream;
let guard: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
/** What the fake transcription model hears. */
let transcript = '';

beforeAll(async () => {
  [fake, guard] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
  guard.route((req, res) => {
    const { guardrail, texts } = req.body as { guardrail: string; texts: string[] };
    json(res, 200, SERVICES[guardrail](texts));
    return true;
  });
  fake.route((req, res) => {
    if (req.path.endsWith('/moderations')) {
      const body = req.body as { model: string; input: string };
      json(res, 200, { id: 'modr-1', model: body.model, results: [{ flagged: false, categories: {}, category_scores: scoresOf(body.input) }] });
      return true;
    }
    if (!req.path.endsWith('/audio/transcriptions')) return false;
    // The form's response_format, read from its raw bytes.
    const format = /name="response_format"\r\n\r\n([a-z_]+)/.exec(req.raw.toString('latin1'))?.[1] ?? 'json';
    if (format === 'text') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${transcript}\n`);
    } else {
      json(res, 200, { text: transcript, usage: { type: 'duration', seconds: 3 } });
    }
    return true;
  });
  gw = await startGateway({
    channels: {
      gpt: `id: gpt\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: gpt-fake\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n  - id: mod-fake\n    kind: moderation\n    price: { perRequest: ${MODERATION_MICROS / 1e6} }\n  - id: whisper-fake\n    kind: transcription\n    media: { maxAudioSeconds: 1800 }\n    price: { perMinute: 0.006 }\n`,
    },
    files: { 'routes/main.yaml': ROUTES, 'guardrails/main.yaml': GUARDRAILS.replaceAll('{{guard}}', guard.url) },
    extraConfig: 'requestLogs:\n  captureBodies: true\n',
    listen: true,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([fake, guard].map((f) => f?.close()));
});
beforeEach(() => {
  fake.reset();
  guard.reset();
  fake.chat = { text: 'Noted.', usage: { prompt_tokens: 10, completion_tokens: 5 } };
});

const chat = (model: string) => openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say something.' }] }).withResponse();
const audio = () => toFile(Buffer.from('ID3 fake mp3 bytes'), 'meeting.mp3', { type: 'audio/mpeg' });
const moderationCalls = () => fake.requests.filter((r: RecordedRequest) => r.path.endsWith('/moderations'));

async function ledgerOf(requestId: string, count: number): Promise<Record<string, any>[]> {
  for (let i = 0; i < 100; i++) {
    const rows = await gw.services.db.selectFrom('usage_ledger').selectAll().where('request_id', '=', requestId).execute();
    if (rows.length >= count) return rows as Record<string, any>[];
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`request ${requestId} has fewer than ${count} ledger rows`);
}

/** The client's own request-log row of a request (not a guardrail's internal call). */
async function rowOf(requestId: string): Promise<Record<string, any>> {
  for (let i = 0; i < 100; i++) {
    await gw.services.requestLogs.commitQueued();
    const rows = (await gw.services.db.selectFrom('request_logs').selectAll().where('request_id', '=', requestId).execute()) as Record<string, any>[];
    const row = rows.find((r) => !String(r.route).startsWith('guardrail:'));
    if (row) return row;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`request ${requestId} has no request-log row`);
}

describe('moderation at output', () => {
  it('sends the answer to the moderation model (billed) and ends it as filtered above its threshold; the upstream is charged what it reported', async () => {
    fake.chat = { text: 'You idiot, you complete idiot.', usage: { prompt_tokens: 10, completion_tokens: 5 } };
    const { data, response } = await chat('civil-chat');
    expect(data.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: null, refusal: 'the answer was blocked by guardrail "civil-out"' } });
    expect((data as unknown as { guardrail: string }).guardrail).toBe('civil-out');
    expect(JSON.stringify(data)).not.toContain('idiot');
    const checked = moderationCalls();
    expect(checked).toHaveLength(1);
    expect((checked[0].body as { input: string }).input).toBe('You idiot, you complete idiot.');
    const requestId = response.headers.get('x-request-id')!;
    const rows = await ledgerOf(requestId, 2);
    // The answer's own call at the tokens the upstream reported (10 in at 1, 5 out at 2 per million), and the moderation call.
    expect(rows.map((r) => Number(r.cost_micros)).sort((a, b) => a - b)).toEqual([20, MODERATION_MICROS]);
    const row = await rowOf(requestId);
    expect(JSON.parse(row.guardrails)).toEqual([expect.objectContaining({ id: 'civil-out', stage: 'output', verdict: 'block', matches: { harassment: 1 } })]);
  });

  it('passes an answer under its threshold as it was', async () => {
    const { data } = await chat('civil-chat');
    expect(data.choices[0].message.content).toBe('Noted.');
    expect(moderationCalls()).toHaveLength(1);
  });

  it('flag records the verdict and passes the answer', async () => {
    fake.chat = { text: 'Only one idiot here, and then another idiot.', usage: { prompt_tokens: 10, completion_tokens: 5 } };
    const { data, response } = await chat('watched-chat');
    expect(data.choices[0].message.content).toBe('Only one idiot here, and then another idiot.');
    const row = await rowOf(response.headers.get('x-request-id')!);
    expect(JSON.parse(row.guardrails)).toEqual([expect.objectContaining({ id: 'civil-out-flag', stage: 'output', verdict: 'flag', matches: { harassment: 1 } })]);
  });

  it('refuses a request that asks to stream before anything is sent: the stream could not be checked before it goes out', async () => {
    const err = await openai.chat.completions.create({ model: 'civil-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('"civil-out": it checks whole answers; ask without stream');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('http guard at output', () => {
  it("redacts the spans the service names in the answer the client gets; the service is told the stage", async () => {
    fake.chat = { text: `Your contact is ${NAME}.`, usage: { prompt_tokens: 10, completion_tokens: 5 } };
    const { data, response } = await chat('names-chat');
    expect(data.choices[0].message.content).toBe('Your contact is [REDACTED:name].');
    expect(guard.last!.body).toMatchObject({ guardrail: 'names-out', stage: 'output', model: 'names-chat', texts: [`Your contact is ${NAME}.`] });
    const row = await rowOf(response.headers.get('x-request-id')!);
    expect(JSON.parse(row.guardrails)).toEqual([expect.objectContaining({ id: 'names-out', stage: 'output', verdict: 'redact', matches: { name: 1 } })]);
  });

  it('a block ends the answer as filtered, naming the guardrail', async () => {
    fake.chat = { text: 'Here is the forbidden topic in detail.', usage: { prompt_tokens: 10, completion_tokens: 5 } };
    const { data } = await chat('policy-chat');
    expect(data.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: null } });
    expect(JSON.stringify(data)).not.toContain('forbidden topic');
    fake.chat = { text: 'A fine topic.', usage: { prompt_tokens: 10, completion_tokens: 5 } };
    expect((await chat('policy-chat')).data.choices[0].message.content).toBe('A fine topic.');
  });
});

describe("a transcript's text, checked by the input guardrails after the fact", () => {
  it('redact: the client gets the transcript redacted, as JSON and as text; the upstream heard it all, the call is charged', async () => {
    transcript = `Mail me at ${EMAIL}, card ${CARD}, thanks.`;
    const { data, response } = await openai.audio.transcriptions.create({ model: 'whisper-redact', file: await audio() }).withResponse();
    expect(data.text).toBe('Mail me at [REDACTED:email], card [REDACTED:payment-card], thanks.');
    const rows = await ledgerOf(response.headers.get('x-request-id')!, 1);
    expect(Number(rows[0].cost_micros)).toBe(300);
    const row = await rowOf(response.headers.get('x-request-id')!);
    expect(JSON.parse(row.guardrails)).toEqual([expect.objectContaining({ id: 'pii-transcript', stage: 'input', verdict: 'redact', matches: { email: 1, 'payment-card': 1 } })]);
    const text = await openai.audio.transcriptions.create({ model: 'whisper-redact', file: await audio(), response_format: 'text' });
    expect(text).toBe('Mail me at [REDACTED:email], card [REDACTED:payment-card], thanks.\n');
  });

  it('block: a 400 the SDK raises naming the guardrail, never the text; the transcription is still charged', async () => {
    transcript = `My token is ${SECRET}.`;
    const err = await openai.audio.transcriptions.create({ model: 'whisper-block', file: await audio() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('guardrail_blocked');
    expect((err as Error).message).toContain('"secret-transcript"');
    expect((err as Error).message).not.toContain(SECRET);
    const requestId = (err as InstanceType<typeof OpenAI.BadRequestError>).headers?.get('x-request-id');
    expect(requestId).toBeTruthy();
    const rows = await ledgerOf(requestId!, 1);
    expect(Number(rows[0].cost_micros)).toBe(300);
    const row = await rowOf(requestId!);
    expect(row.status).toBe(400);
    expect(JSON.parse(row.guardrails)).toEqual([expect.objectContaining({ id: 'secret-transcript', stage: 'input', verdict: 'block', matches: { secret: 1 } })]);
  });

  it('flag: the transcript passes as it was, the verdict recorded', async () => {
    transcript = `Write to ${EMAIL}.`;
    const { data, response } = await openai.audio.transcriptions.create({ model: 'whisper-flag', file: await audio() }).withResponse();
    expect(data.text).toBe(`Write to ${EMAIL}.`);
    const row = await rowOf(response.headers.get('x-request-id')!);
    expect(JSON.parse(row.guardrails)).toEqual([expect.objectContaining({ id: 'watch-transcript', stage: 'input', verdict: 'flag', matches: { email: 1 } })]);
  });

  it('a streamed transcript, which would go out before it is checked, is refused where an input guardrail redacts; nothing is sent', async () => {
    const err = await openai.audio.transcriptions.create({ model: 'whisper-redact', file: await audio(), stream: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('"pii-transcript": it checks whole transcripts; ask without stream');
    expect(fake.requests).toHaveLength(0);
  });

  it('no request-log row, captured body or guard call holds what the transcript guardrails matched', async () => {
    await gw.services.requestLogs.commitQueued();
    const rows = await gw.services.db.selectFrom('request_logs').selectAll().execute();
    const logged = JSON.stringify(rows);
    for (const value of [EMAIL, CARD, SECRET]) expect(logged).not.toContain(value);
  });
});
