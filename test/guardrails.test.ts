// Guardrails (guardrails/*.yaml) through HTTP with the official SDKs on loopback fakes: pattern guardrails redact an
// e-mail address and a card number from chat, Messages, Responses and embeddings input before the upstream sees them,
// refuse a secret with a typed 400 naming the guardrail, redact a secret in the answer (whole and streamed), and cut a
// stream whose text trips a block with an error event the SDKs raise.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { installResponses, type ResponsesScript } from './kit/fake-responses.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { newAdminToken } from '../src/admin/auth.js';

const admin = newAdminToken();

/** Values a guardrail matches: none of them may reach the upstream (input) or the client (output) in clear. */
export const SECRETS = {
  email: 'jane.doe@example.com',
  card: '4111 1111 1111 1111',
  key: 'sk-proj-Abcdefghijklmnopqrstuvwx0123456789',
  upstreamKey: 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB',
  forbidden: 'TOP-SECRET-4242',
};

const GUARDRAILS = `
- id: pii-redact
  kind: pattern
  detectors: [email, payment-card]
  action: redact
  models: [embed-fake]
- id: secrets-block
  kind: pattern
  detectors: [secret]
  action: block
- id: answer-secrets
  kind: pattern
  detectors: [secret]
  stage: [output, stream]
  action: redact
- id: stream-stop
  kind: pattern
  patterns: [{ name: forbidden, regex: 'TOP-SECRET-[0-9]+' }]
  stage: [output, stream]
  action: block
- id: iban-flag
  kind: pattern
  detectors: [iban]
  action: flag
  offered: true
`;

const ROUTES = `
- id: safe-chat
  targets: [{ model: gpt-fake }]
  guardrails: [pii-redact, secrets-block, answer-secrets]
- id: safe-claude
  targets: [{ model: claude-fake }]
  guardrails: [pii-redact, secrets-block, answer-secrets]
- id: strict-chat
  targets: [{ model: gpt-fake }]
  guardrails: [stream-stop]
`;

let fake: FakeUpstream;
let claudeFake: FakeUpstream;
let responses: ResponsesScript;
export let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  [fake, claudeFake] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
  responses = installResponses(fake);
  fake.route((req, res) => {
    if (!req.path.endsWith('/embeddings')) return false;
    json(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'embed-fake', usage: { prompt_tokens: 4, total_tokens: 4 } });
    return true;
  });
  gw = await startGateway({
    channels: {
      gpt: `id: gpt\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: gpt-fake\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n  - id: embed-fake\n    kind: embedding\n    price: { inputPerMillion: 0.1 }\n`,
      claude: `id: claude\nprotocol: anthropic-messages\nbaseUrl: ${claudeFake.url}/v1\ncredential:\n  env: FAKE_ANTHROPIC_KEY\nmodels:\n  - id: claude-fake\n    kind: chat\n    price: { inputPerMillion: 3, outputPerMillion: 4 }\n`,
    },
    files: { 'routes/main.yaml': ROUTES, 'guardrails/main.yaml': GUARDRAILS },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' },
    extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${admin.sha256}\n`,
    listen: true,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([fake, claudeFake].map((f) => f?.close()));
});
beforeEach(() => {
  for (const f of [fake, claudeFake]) {
    f.reset();
    f.chat = { text: 'All fine here.', usage: { prompt_tokens: 10, completion_tokens: 5 } };
  }
  responses.text = 'Hello from Responses.';
});

const personal = `Mail ${SECRETS.email} and charge card ${SECRETS.card}, please.`;
/** What the upstream received, as text: none of the matched values may be in it. */
const sentText = (f: FakeUpstream) => f.last!.raw.toString('utf8');

describe('input: redact', () => {
  it('chat: the e-mail address and card number are replaced before the upstream sees them', async () => {
    const answer = await openai.chat.completions.create({ model: 'safe-chat', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: personal }] });
    expect(answer.choices[0].message.content).toBe('All fine here.');
    const sent = fake.last!.body as { messages: { content: string }[] };
    expect(sent.messages[1].content).toBe('Mail [REDACTED:email] and charge card [REDACTED:payment-card], please.');
    expect(sent.messages[0].content).toBe('Be brief.');
    expect(sentText(fake)).not.toContain(SECRETS.email);
  });

  it('Messages: text blocks and the system prompt are redacted (official Anthropic SDK)', async () => {
    const answer = await anthropic.messages.create({
      model: 'safe-claude',
      max_tokens: 16,
      system: `Reply to ${SECRETS.email}.`,
      messages: [{ role: 'user', content: [{ type: 'text', text: personal }] }],
    });
    expect(answer.content[0]).toMatchObject({ type: 'text', text: 'All fine here.' });
    const sent = sentText(claudeFake);
    expect(sent).toContain('[REDACTED:email]');
    expect(sent).toContain('[REDACTED:payment-card]');
    expect(sent).not.toContain(SECRETS.email);
    expect(sent).not.toContain(SECRETS.card);
  });

  it('Responses: the input items are redacted', async () => {
    const answer = await openai.responses.create({ model: 'safe-chat', instructions: `Cc ${SECRETS.email}`, input: [{ role: 'user', content: [{ type: 'input_text', text: personal }] }] });
    expect(answer.output_text).toBe('Hello from Responses.');
    const sent = sentText(fake);
    expect(fake.last!.path).toMatch(/\/responses$/);
    expect(sent).toContain('[REDACTED:payment-card]');
    expect(sent).not.toContain(SECRETS.email);
    expect(sent).not.toContain(SECRETS.card);
  });

  it('embeddings: a guardrail attached to the model redacts every input string', async () => {
    const answer = await openai.embeddings.create({ model: 'embed-fake', input: [personal, 'plain text'], encoding_format: 'float' });
    expect(answer.data[0].embedding).toEqual([0.1, 0.2]);
    expect((fake.last!.body as { input: string[] }).input).toEqual(['Mail [REDACTED:email] and charge card [REDACTED:payment-card], please.', 'plain text']);
  });

  it('a model without guardrails passes its input untouched', async () => {
    await openai.chat.completions.create({ model: 'gpt-fake', messages: [{ role: 'user', content: personal }] });
    expect((fake.last!.body as { messages: { content: string }[] }).messages[0].content).toBe(personal);
  });
});

describe('input: block', () => {
  it('a secret in a chat request is a 400 the OpenAI SDK raises, naming the guardrail and not the secret; nothing is sent or charged', async () => {
    const err = await openai.chat.completions.create({ model: 'safe-chat', messages: [{ role: 'user', content: `my key is ${SECRETS.key}` }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const error = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error.status).toBe(400);
    expect(error.code).toBe('guardrail_blocked');
    expect(error.message).toContain('secrets-block');
    expect(error.message).not.toContain(SECRETS.key);
    expect(fake.requests).toHaveLength(0);
  });

  it('the Anthropic SDK raises the same refusal as a BadRequestError', async () => {
    const err = await anthropic.messages.create({ model: 'safe-claude', max_tokens: 8, messages: [{ role: 'user', content: `use ${SECRETS.upstreamKey}` }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toContain('secrets-block');
    expect(JSON.stringify((err as { error?: unknown }).error)).not.toContain(SECRETS.upstreamKey);
    expect(claudeFake.requests).toHaveLength(0);
  });
});

describe('output', () => {
  it('a secret in a chat answer is redacted', async () => {
    fake.chat.text = `Here it is: ${SECRETS.upstreamKey} (keep it safe)`;
    const answer = await openai.chat.completions.create({ model: 'safe-chat', messages: [{ role: 'user', content: 'the key?' }] });
    expect(answer.choices[0].message.content).toBe('Here it is: [REDACTED:secret] (keep it safe)');
  });

  it('a secret in a streamed chat answer is redacted across the chunks it spans', async () => {
    fake.chat.text = `Here it is: ${SECRETS.upstreamKey} (keep it safe). ${'More words follow. '.repeat(20)}`;
    const stream = await openai.chat.completions.create({ model: 'safe-chat', stream: true, messages: [{ role: 'user', content: 'the key?' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(fake.chat.text.replace(SECRETS.upstreamKey, '[REDACTED:secret]'));
  });

  it('a secret in a streamed Messages answer is redacted (official Anthropic SDK)', async () => {
    claudeFake.chat.text = `Key: ${SECRETS.upstreamKey} done.`;
    const stream = anthropic.messages.stream({ model: 'safe-claude', max_tokens: 64, messages: [{ role: 'user', content: 'the key?' }] });
    const message = await stream.finalMessage();
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Key: [REDACTED:secret] done.' });
  });

  it('a secret in a streamed Responses answer is redacted in its deltas and in its closing events', async () => {
    responses.text = `Key: ${SECRETS.upstreamKey} done.`;
    const stream = openai.responses.stream({ model: 'safe-chat', input: 'the key?' });
    let deltas = '';
    stream.on('response.output_text.delta', (e) => (deltas += e.delta));
    const final = await stream.finalResponse();
    expect(deltas).toBe('Key: [REDACTED:secret] done.');
    expect(final.output_text).toBe('Key: [REDACTED:secret] done.');
  });

  it('a block on the answer ends it as filtered (finish_reason content_filter), without its text', async () => {
    fake.chat.text = `The code is ${SECRETS.forbidden}.`;
    const answer = await openai.chat.completions.create({ model: 'strict-chat', messages: [{ role: 'user', content: 'the code?' }] });
    expect(answer.choices[0].finish_reason).toBe('content_filter');
    expect(answer.choices[0].message.content).toBeNull();
    expect(answer.usage?.completion_tokens).toBe(5);
  });

  it('a stream whose text trips a block mid-way ends with an error event the OpenAI SDK raises; the forbidden text never arrives', async () => {
    fake.chat.text = `${'Plenty of harmless words first. '.repeat(20)}Then ${SECRETS.forbidden} and more.`;
    const stream = await openai.chat.completions.create({ model: 'strict-chat', stream: true, messages: [{ role: 'user', content: 'go' }] });
    let seen = '';
    const err = await (async () => {
      for await (const chunk of stream) seen += chunk.choices[0]?.delta?.content ?? '';
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toContain('stream-stop');
    expect(seen).not.toContain('TOP-SECRET');
    expect(seen.length).toBeGreaterThan(0);
  });
});

describe('workspaces and keys', () => {
  const put = (path: string, guardrails: string[]) => gw.app.inject({ method: 'PUT', url: `/admin/v1${path}/guardrails`, headers: { authorization: `Bearer ${admin.token}` }, payload: { guardrails } });

  it('a workspace adds an offered guardrail (its verdicts are recorded), and cannot add one the operator does not offer', async () => {
    const ws = await gw.newWorkspace('adds-iban');
    const key = await gw.newKey({ workspace: ws });
    expect((await put(`/workspaces/${ws.id}`, ['iban-flag'])).json()).toEqual({ guardrails: ['iban-flag'] });
    const refused = await put(`/workspaces/${ws.id}`, ['secrets-block']);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'guardrail_not_offered', param: 'guardrails' });
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
    await client.chat.completions.create({ model: 'gpt-fake', messages: [{ role: 'user', content: 'pay DE89 3704 0044 0532 0130 00' }] });
    // flag: passed as it was, and recorded.
    expect((fake.last!.body as { messages: { content: string }[] }).messages[0].content).toBe('pay DE89 3704 0044 0532 0130 00');
    expect(await gw.services.metrics.scrape()).toContain('gateway_guardrail_verdicts_total{guardrail="iban-flag",stage="input",verdict="flag"} 1');
  });

  it("a key that adds nothing, in a workspace that adds nothing, still passes the operator's guardrails", async () => {
    const ws = await gw.newWorkspace('adds-nothing');
    const key = await gw.newKey({ workspace: ws });
    const keyId = (await gw.services.db.selectFrom('api_keys').select('id').where('workspace_id', '=', ws.id).executeTakeFirstOrThrow()).id;
    expect((await put(`/keys/${keyId}`, [])).json()).toEqual({ guardrails: [] });
    expect((await put(`/workspaces/${ws.id}`, [])).statusCode).toBe(200);
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'safe-chat', messages: [{ role: 'user', content: `key ${SECRETS.key}` }] }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('guardrail_blocked');
  });
});
