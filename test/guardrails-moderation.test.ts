// `moderation` guardrails through HTTP with the official SDKs: the request's text goes to a moderation model of the
// gateway's own catalogue as an internal call, billed to the workspace (charged even when the input is then blocked)
// with a request-log row of its own; a score at or above the category's threshold refuses the request with a 400 naming
// the guardrail; a moderation model that does not answer by the deadline fails open or closed as configured.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

/** What the fake moderation model scores: harassment by the insults in the text, violence by the threats. */
const scoresOf = (text: string) => ({
  harassment: Math.min(1, (text.match(/\bidiot\b/g) ?? []).length * 0.3),
  violence: Math.min(1, (text.match(/\bpunch\b/g) ?? []).length * 0.45),
});

const GUARDRAILS = `
- id: civil
  kind: moderation
  moderation: { model: mod-fake, thresholds: { harassment: 0.5 } }
  action: block
- id: civil-flag
  kind: moderation
  moderation: { model: mod-fake, threshold: 0.4 }
  action: flag
- id: slow-open
  kind: moderation
  moderation: { model: mod-slow }
  action: block
  timeoutMs: 150
  failMode: open
- id: slow-closed
  kind: moderation
  moderation: { model: mod-slow }
  action: block
  timeoutMs: 150
  failMode: closed
`;
const ROUTES = `
- id: civil-chat
  targets: [{ model: gpt-fake }]
  guardrails: [civil]
- id: civil-claude
  targets: [{ model: claude-fake }]
  guardrails: [civil]
- id: watched-chat
  targets: [{ model: gpt-fake }]
  guardrails: [civil-flag]
- id: lenient-chat
  targets: [{ model: gpt-fake }]
  guardrails: [slow-open]
- id: strict-chat
  targets: [{ model: gpt-fake }]
  guardrails: [slow-closed]
`;
const MODERATION_MICROS = 2000;

let fake: FakeUpstream;
let claudeFake: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;

beforeAll(async () => {
  [fake, claudeFake] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
  fake.route((req, res) => {
    if (!req.path.endsWith('/moderations')) return false;
    const body = req.body as { model: string; input: string };
    // The slow model answers after the guardrails' deadline has passed.
    const answer = () => json(res, 200, { id: 'modr-1', model: body.model, results: [{ flagged: scoresOf(body.input).harassment >= 0.9, categories: {}, category_scores: scoresOf(body.input) }] });
    if (body.model === 'mod-slow') setTimeout(answer, 1000);
    else answer();
    return true;
  });
  const price = `price: { perRequest: ${MODERATION_MICROS / 1e6} }`;
  gw = await startGateway({
    channels: {
      gpt: `id: gpt\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: gpt-fake\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n  - id: mod-fake\n    kind: moderation\n    ${price}\n  - id: mod-slow\n    kind: moderation\n    ${price}\n`,
      claude: `id: claude\nprotocol: anthropic-messages\nbaseUrl: ${claudeFake.url}/v1\ncredential:\n  env: FAKE_ANTHROPIC_KEY\nmodels:\n  - id: claude-fake\n    kind: chat\n    price: { inputPerMillion: 3, outputPerMillion: 4 }\n`,
    },
    files: { 'routes/main.yaml': ROUTES, 'guardrails/main.yaml': GUARDRAILS },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' },
    listen: true,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([fake, claudeFake].map((f) => f?.close()));
});
beforeEach(() => {
  for (const f of [fake, claudeFake]) {
    f.reset();
    f.chat = { text: 'Noted.', usage: { prompt_tokens: 10, completion_tokens: 5 } };
  }
});

const paths = () => fake.requests.map((r) => r.path);

async function ledgerOf(requestId: string, count: number): Promise<Record<string, any>[]> {
  for (let i = 0; i < 100; i++) {
    const rows = await gw.services.db.selectFrom('usage_ledger').selectAll().where('request_id', '=', requestId).execute();
    if (rows.length >= count) return rows as Record<string, any>[];
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`request ${requestId} has fewer than ${count} ledger rows`);
}

/** A request's two request-log rows: the guardrail's internal call (route `guardrail:<id>`) and the client's own. */
async function logRowsOf(requestId: string): Promise<{ guard: Record<string, any>; outer: Record<string, any> }> {
  for (let i = 0; i < 100; i++) {
    await gw.services.requestLogs.commitQueued();
    const rows = (await gw.services.db.selectFrom('request_logs').selectAll().where('request_id', '=', requestId).execute()) as Record<string, any>[];
    const guard = rows.find((r) => r.route.startsWith('guardrail:'));
    const outer = rows.find((r) => !r.route.startsWith('guardrail:'));
    if (guard && outer) return { guard, outer };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`request ${requestId} has not both its request-log rows`);
}

describe('moderation: blocking above the threshold', () => {
  it('refuses a prompt the moderation model scores above its threshold with a 400 the OpenAI SDK raises; the moderation call is charged, the chat never sent', async () => {
    const err = await openai.chat.completions.create({ model: 'civil-chat', messages: [{ role: 'user', content: 'You idiot, you utter idiot.' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const error = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error.code).toBe('guardrail_blocked');
    expect(error.message).toContain('"civil"');
    expect(paths()).toEqual(['/v1/moderations']);
    expect(fake.last!.body).toEqual({ model: 'mod-fake', input: 'You idiot, you utter idiot.' });
    const requestId = error.headers!.get('x-request-id')!;
    const ledger = await ledgerOf(requestId, 1);
    expect(ledger.map((r) => [r.model, Number(r.cost_micros)])).toEqual([['mod-fake', MODERATION_MICROS]]);
    const { guard, outer } = await logRowsOf(requestId);
    expect(outer).toMatchObject({ status: 400, error_code: 'guardrail_blocked', cost_micros: 0 });
    expect(JSON.parse(outer.guardrails)).toEqual([expect.objectContaining({ id: 'civil', stage: 'input', verdict: 'block', matches: { harassment: 1 } })]);
    expect(guard).toMatchObject({ route: 'guardrail:civil', model: 'mod-fake', status: 200, cost_micros: MODERATION_MICROS });
  });

  it('passes a prompt below the threshold: both the moderation call and the chat are charged to the workspace', async () => {
    const { data, response } = await openai.chat.completions.create({ model: 'civil-chat', messages: [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: 'Only one idiot here, and a punch line.' }] }).withResponse();
    expect(data.choices[0].message.content).toBe('Noted.');
    expect(paths()).toEqual(['/v1/moderations', '/v1/chat/completions']);
    // Every text of the request, as one input.
    expect(fake.requests[0].body).toEqual({ model: 'mod-fake', input: 'Be kind.\n\nOnly one idiot here, and a punch line.' });
    const ledger = await ledgerOf(response.headers.get('x-request-id')!, 2);
    expect(ledger.map((r) => r.model).sort()).toEqual(['gpt-fake', 'mod-fake']);
    expect(new Set(ledger.map((r) => r.workspace_id))).toEqual(new Set([gw.workspace.id]));
  });

  it('moderates a Messages request too, refused with a BadRequestError the Anthropic SDK raises', async () => {
    const anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
    const err = await anthropic.messages.create({ model: 'civil-claude', max_tokens: 8, system: 'idiot', messages: [{ role: 'user', content: [{ type: 'text', text: 'idiot idiot' }] }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toContain('"civil"');
    expect(claudeFake.requests).toHaveLength(0);
  });

  it('a flag guardrail passes the request and records the categories at or above its one threshold', async () => {
    const { response } = await openai.chat.completions.create({ model: 'watched-chat', messages: [{ role: 'user', content: 'I will punch the idiot.' }] }).withResponse();
    const { outer } = await logRowsOf(response.headers.get('x-request-id')!);
    expect(JSON.parse(outer.guardrails)).toEqual([expect.objectContaining({ id: 'civil-flag', verdict: 'flag', matches: { violence: 1 } })]);
    expect(paths()).toEqual(['/v1/moderations', '/v1/chat/completions']);
  });
});

describe('moderation: past the deadline', () => {
  it('fails open: the request goes on, its verdict a pass marked timeout', async () => {
    const { data, response } = await openai.chat.completions.create({ model: 'lenient-chat', messages: [{ role: 'user', content: 'hello' }] }).withResponse();
    expect(data.choices[0].message.content).toBe('Noted.');
    const { outer } = await logRowsOf(response.headers.get('x-request-id')!);
    expect(JSON.parse(outer.guardrails)).toEqual([expect.objectContaining({ id: 'slow-open', verdict: 'pass', failed: 'timeout' })]);
    expect(JSON.parse(outer.guardrails)[0].ms).toBeLessThan(1000);
  });

  it('fails closed: a 400 naming the guardrail, and the chat is never sent', async () => {
    const err = await openai.chat.completions.create({ model: 'strict-chat', messages: [{ role: 'user', content: 'hello' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toMatch(/"slow-closed": its check did not answer in time/);
    expect(paths()).toEqual(['/v1/moderations']);
  });
});
