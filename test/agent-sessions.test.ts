// Recorded agent sessions replayed against a listening gateway (issue 34): a Claude Code-shaped Messages session and a
// Codex-shaped Responses session (test/fixtures/sessions/), each on pass-through and on translated routes, against fakes
// that enforce the vendors' rules. Every request answers, and every answer is billed at list price.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installClaude, sign, type FakeClaude } from './kit/fake-claude.js';
import { installResponses } from './kit/fake-responses.js';
import { agentPrice as price, claudeChannel, claudeEnv, openaiAgentModels } from './kit/agent-models.js';
import { chatChannel, repoRoot, startGateway, type TestGateway } from './kit/gateway.js';

interface Session {
  headers: Record<string, string>;
  requests: { path: string; body: Record<string, any> }[];
}
const session = (name: string): Session => JSON.parse(readFileSync(join(repoRoot, 'test', 'fixtures', 'sessions', `${name}.json`), 'utf8'));

let fake: FakeUpstream;
let claude: FakeClaude;
let gw: TestGateway;

const claudeModels = `  - id: claude-sonnet-4-5
    aliases: [claude-sonnet-4-5-20250929]
    upstream: claude-sonnet-upstream
    kind: chat
    thinking: true
    ${price}
  - id: claude-haiku-4-5
    aliases: [claude-haiku-4-5-20251001]
    upstream: claude-haiku-upstream
    kind: chat
    thinking: true
    ${price}
`;
const vendorModels = `  - id: vendor-chat
    upstream: upstream-chat
    kind: chat
    ${price}
`;
const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n';

beforeAll(async () => {
  fake = await FakeUpstream.start();
  claude = installClaude(fake);
  installResponses(fake);
  // The chat fakes answer by turn: the agent's tool (Write, or apply_patch) until a tool has answered, then text.
  fake.route((req, _res, f) => {
    if (!req.path.endsWith('/chat/completions')) return false;
    const tools: { function: { name: string } }[] = req.body.tools ?? [];
    const answered = req.body.messages.at(-1).role === 'tool';
    const tool = tools.find((t) => t.function.name === 'Write' || t.function.name === 'apply_patch');
    f.chat = { text: answered || !tool ? 'Done.' : '', usage: { prompt_tokens: 50, completion_tokens: 9 } };
    if (tool && !answered) {
      const args = tool.function.name === 'Write' ? { file_path: '/repo/hello.txt', content: 'hi\n' } : { input: PATCH };
      f.chat.toolCalls = [{ id: 'call_1', name: tool.function.name, arguments: JSON.stringify(args) }];
    }
    return false;
  });
  gw = await startGateway({
    channels: {
      claude: claudeChannel(fake.url, claudeModels),
      openai: chatChannel('openai', `${fake.url}/v1`, { models: openaiAgentModels }),
      vendor: chatChannel('vendor', `${fake.url}/v1`, { models: vendorModels, operations: ['chat'] }),
    },
    env: claudeEnv,
    listen: true,
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  claude.refusals.length = 0;
  claude.turn = (req) => {
    const tools: { name: string }[] = req.tools ?? [];
    const last = req.messages.at(-1);
    const answered = Array.isArray(last.content) && last.content.some((b: { type: string }) => b.type === 'tool_result');
    const tool = tools.find((t) => t.name === 'Write' || t.name === 'apply_patch');
    if (!tool || answered) return { content: [{ type: 'thinking', thinking: 'Done it.' }, { type: 'text', text: 'Done.' }] };
    const input = tool.name === 'Write' ? { file_path: '/repo/hello.txt', content: 'hi\n' } : { input: PATCH };
    return { content: [{ type: 'thinking', thinking: 'I will write it.' }, { type: 'tool_use', id: 'toolu_1', name: tool.name, input }] };
  };
});
afterEach(async () => {
  expect(claude.refusals).toEqual([]);
  const rows = await gw.services.db.selectFrom('usage_ledger').select(['input_tokens', 'output_tokens', 'cost_micros']).execute();
  for (const row of rows) expect(Number(row.cost_micros)).toBe(Number(row.input_tokens) * 2 + Number(row.output_tokens) * 10);
});

async function send(path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string; requestId: string }> {
  const res = await fetch(`${gw.url}/api${path}`, { method: 'POST', headers: { 'x-api-key': gw.key, authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), requestId: res.headers.get('x-request-id')! };
}

/** The events of an SSE body, parsed. */
const events = (text: string) => text.split('\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]').map((l) => JSON.parse(l.slice(6)));

describe('a recorded Claude Code session', () => {
  const recorded = session('claude-code');

  it.each([
    ['pass-through to Anthropic (Claude Code default ids, as aliases)', {}],
    ['translated to an OpenAI chat model and a reasoning model', { 'claude-sonnet-4-5-20250929': 'gpt-reasoner', 'claude-haiku-4-5-20251001': 'gpt-plain' }],
  ] as const)('%s: every request answers', async (_name, models: Record<string, string>) => {
    for (const { path, body } of recorded.requests) {
      const sent = structuredClone(body);
      sent.model = models[sent.model] ?? sent.model;
      // The recorded signature is the real API's; the fake verifies its own.
      for (const m of sent.messages) for (const b of Array.isArray(m.content) ? m.content : []) if (b.type === 'thinking') b.signature = sign(b.thinking);
      const res = await send(path, recorded.headers, sent);
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      if (body.stream) {
        const all = events(res.text);
        expect(all.at(-1)).toEqual({ type: 'message_stop' });
        expect(all[0].message.usage.input_tokens).toBeGreaterThan(0);
      }
    }
    const last = fake.last!.body;
    if (models['claude-sonnet-4-5-20250929']) {
      expect(last.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'toolu_01Write' });
      expect(last.user).toHaveLength(64);
    } else {
      expect(last.context_management).toEqual({ edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] });
      expect(fake.last!.headers['anthropic-beta']).toBe(recorded.headers['anthropic-beta']);
    }
  });
});

describe('a recorded Codex session', () => {
  const recorded = session('codex');

  it.each(['claude-sonnet-4-5', 'vendor-chat'])('translated (%s): the apply_patch call comes back as custom_tool_call, and the next turn completes', async (model) => {
    const [one, two] = recorded.requests;
    const first = await send(one.path, recorded.headers, { ...one.body, model });
    expect(first.status, first.text.slice(0, 300)).toBe(200);
    const completed = events(first.text).find((e) => e.type === 'response.completed').response;
    const call = completed.output.find((i: { type: string }) => i.type === 'custom_tool_call');
    expect(call).toMatchObject({ name: 'apply_patch', input: PATCH });
    if (model === 'claude-sonnet-4-5') expect(completed.output[0]).toMatchObject({ type: 'reasoning', encrypted_content: expect.stringMatching(/^gw-thinking-1\./) });
    const input = two.body.input.flatMap((item: unknown) => (item === 'OUTPUT_OF_TURN_1' ? completed.output : [item])).map((item: Record<string, unknown>) => (item.call_id === 'CALL_ID_OF_TURN_1' ? { ...item, call_id: call.call_id } : item));
    const second = await send(two.path, recorded.headers, { ...two.body, model, input, tools: one.body.tools });
    expect(second.status, second.text.slice(0, 300)).toBe(200);
    expect(events(second.text).find((e) => e.type === 'response.completed').response.output.at(-1).content[0].text).toBe('Done.');
    if (model === 'claude-sonnet-4-5') expect(fake.last!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
  });

  it('passed through to a Responses channel: the upstream gets what Codex sent, model mapped', async () => {
    const [one] = recorded.requests;
    const res = await send(one.path, recorded.headers, { ...one.body, model: 'gpt-plain' });
    expect(res.status).toBe(200);
    expect(fake.last!.path).toBe('/v1/responses');
    expect(fake.last!.body).toEqual({ ...one.body, model: 'upstream-chat' });
  });
});
