// Routes (routes/*.yaml) through HTTP on fake upstreams: each strategy places requests as its docs say, failover moves on
// only after the failures a route names (never after one that may have run upstream, unless it says `timeout`), cooldowns
// skip and restore a target on the gateway's clock, and a route crosses protocols with the official SDKs as clients.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { adminApi, type AdminApi } from './kit/admin-api.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

let fa: FakeUpstream;
let fb: FakeUpstream;
let fc: FakeUpstream;
let claudeFake: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
let api: AdminApi;
const ops = newAdminToken();
/** The gateway's clock (route latencies and cooldowns read it); the fakes move it to play a slow upstream. */
let clock = Date.parse('2026-11-28T00:00:00Z');
/** Milliseconds fake a and fake b take to answer, on the gateway's clock. */
const delay = { a: 0, b: 0 };

const model = (id: string, input: number, output: number) => `  - id: ${id}
    upstream: up-${id}
    kind: chat
    price: { inputPerMillion: ${input}, outputPerMillion: ${output} }
`;
const channel = (id: string, protocol: string, url: string, models: string, extra = '') =>
  `id: ${id}\nprotocol: ${protocol}\nbaseUrl: ${url}\n${extra}${protocol === 'anthropic-messages' ? 'credential:\n  env: FAKE_ANTHROPIC_KEY\n' : ''}models:\n${models}`;

const routes = `
- id: split
  strategy: weighted
  targets: [{ model: alpha, weight: 60 }, { model: beta, weight: 30 }, { model: gamma, weight: 10 }]
- id: busy
  strategy: least-busy
  targets: [{ model: alpha }, { model: beta }]
- id: fast
  strategy: latency
  targets: [{ model: alpha }, { model: beta }]
- id: stuck
  strategy: sticky
  stickyKey: header:x-session-id
  targets: [{ model: alpha }, { model: beta }, { model: gamma }]
- id: cheap
  strategy: cost
  targets: [{ model: beta }, { model: gamma }, { model: alpha }]
- id: failing
  failover: { on: [connect, timeout, 429, 5xx, context_length_exceeded] }
  targets: [{ model: alpha }, { model: beta }]
- id: patient
  failover: { on: [timeout] }
  targets: [{ model: slow/alpha-slow }, { model: beta }]
- id: strict
  targets: [{ model: gone-model }, { model: slow/alpha-slow }, { model: beta }]
- id: cooling
  cooldown: { failures: 2, windowSeconds: 30, seconds: 60 }
  targets: [{ model: alpha }, { model: beta }]
- id: cross
  targets: [{ model: alpha }, { model: claude-x }]
- id: cross-back
  targets: [{ model: claude-x }, { route: plain }]
- id: plain
  targets: [{ model: alpha }]
`;

beforeAll(async () => {
  [fa, fb, fc, claudeFake] = await Promise.all([FakeUpstream.start(), FakeUpstream.start(), FakeUpstream.start(), FakeUpstream.start()]);
  fa.route(() => ((clock += delay.a), false));
  fb.route(() => ((clock += delay.b), false));
  gw = await startGateway({
    channels: {
      a: channel('a', 'openai-chat', `${fa.url}/v1`, model('alpha', 1, 2)),
      b: channel('b', 'openai-chat', `${fb.url}/v1`, model('beta', 3, 4)),
      c: channel('c', 'openai-chat', `${fc.url}/v1`, model('gamma', 0.5, 1)),
      slow: channel('slow', 'openai-chat', `${fc.url}/v1`, model('alpha-slow', 1, 2), 'timeouts: { headersMs: 150 }\n'),
      gone: channel('gone', 'openai-chat', 'http://127.0.0.1:1/v1', model('gone-model', 1, 2)),
      claude: channel('claude', 'anthropic-messages', `${claudeFake.url}/v1`, model('claude-x', 5, 6)),
    },
    files: { 'routes/main.yaml': routes },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' },
    overrides: { now: () => clock },
    extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`,
    listen: true,
  });
  api = await adminApi(gw.url, ops.token);
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([fa, fb, fc, claudeFake].map((f) => f?.close()));
});
beforeEach(() => {
  for (const [fake, text] of [[fa, 'from a'], [fb, 'from b'], [fc, 'from c'], [claudeFake, 'from claude']] as const) {
    fake.reset();
    fake.chat = { text, usage: { prompt_tokens: 10, completion_tokens: 5 } };
  }
  delay.a = delay.b = 0;
});

const chat = (model: string, headers: Record<string, string> = {}) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}`, ...headers }, payload: { model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] } });

/** The target (channel/model) that answered each of `n` requests to `model`, sent one after another. */
async function targets(model: string, n: number, headers?: (i: number) => Record<string, string>): Promise<string[]> {
  const served: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await chat(model, headers?.(i));
    expect(res.statusCode).toBe(200);
    served.push(res.headers['x-gateway-target'] as string);
  }
  return served;
}

const ledger = async () =>
  (await gw.services.db.selectFrom('usage_ledger').select(['model', 'channel', 'cost_micros']).orderBy('created_at', 'asc').execute()).map((r) => ({ ...r, cost_micros: Number(r.cost_micros) }));

describe('strategies', () => {
  it('weighted: requests split 60/30/10 exactly over each cycle of the weights, and the answer names route and target', async () => {
    // Smooth weighted round robin is exact over every 100 requests (the weights' sum): 300 through HTTP here, the issue's
    // 3,000 ranked directly in routing-strategies.test.ts (through HTTP they take ten times as long).
    const counts: Record<string, number> = {};
    const batch = 50;
    for (let sent = 0; sent < 300; sent += batch) {
      const answers = await Promise.all(Array.from({ length: batch }, () => chat('split')));
      for (const res of answers) {
        expect(res.headers['x-gateway-route']).toBe('split');
        const target = res.headers['x-gateway-target'] as string;
        counts[target] = (counts[target] ?? 0) + 1;
      }
    }
    expect(counts).toEqual({ 'a/alpha': 180, 'b/beta': 90, 'c/gamma': 30 });
    expect([fa.requests.length, fb.requests.length, fc.requests.length]).toEqual([180, 90, 30]);
  });

  it('least-busy: the next request goes to the target with fewest in flight', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const late = { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'late' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } };
    fa.next({
      kind: 'handler',
      fn: async (_req, res) => {
        await held;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(late));
      },
    });
    const first = chat('busy');
    await new Promise<void>((resolve) => { const wait = () => (fa.requests.length ? resolve() : setImmediate(wait)); wait(); });
    expect(await targets('busy', 2)).toEqual(['b/beta', 'b/beta']);
    release();
    expect((await first).headers['x-gateway-target']).toBe('a/alpha');
    expect(await targets('busy', 1)).toEqual(['a/alpha']);
  });

  it('latency: moves off a target that turns slow within a few requests, and back once it recovers', async () => {
    delay.a = 10;
    delay.b = 20;
    await targets('fast', 8);
    delay.a = 1000;
    const slowed = await targets('fast', 16);
    expect(slowed.slice(1).filter((t) => t === 'a/alpha').length).toBeLessThanOrEqual(2);
    expect(slowed.slice(-4).filter((t) => t === 'b/beta').length).toBeGreaterThanOrEqual(3);
    delay.a = 5;
    const recovered = await targets('fast', 12);
    expect(recovered.slice(-4)).toEqual(['a/alpha', 'a/alpha', 'a/alpha', 'a/alpha']);
  });

  it('sticky: every request of one session id reaches one target, and sessions spread over all of them', async () => {
    const bySession = new Map<string, Set<string>>();
    const served = await targets('stuck', 90, (i) => ({ 'x-session-id': `session-${i % 30}` }));
    served.forEach((target, i) => bySession.set(`session-${i % 30}`, (bySession.get(`session-${i % 30}`) ?? new Set()).add(target)));
    for (const seen of bySession.values()) expect(seen.size).toBe(1);
    expect(new Set(served).size).toBe(3);
  });

  it('cost: the cheapest target first', async () => {
    expect(await targets('cheap', 2)).toEqual(['c/gamma', 'c/gamma']);
  });
});

describe('failover', () => {
  it('moves on after a 429, a 5xx, a timeout and context_length_exceeded; the failed attempts charge nothing', async () => {
    fa.next({ kind: 'status', status: 429 });
    expect((await chat('failing')).headers['x-gateway-target']).toBe('b/beta');
    fa.next({ kind: 'status', status: 500 });
    expect((await chat('failing')).headers['x-gateway-target']).toBe('b/beta');
    fa.next({ kind: 'status', status: 400, body: { error: { message: 'too long', type: 'invalid_request_error', code: 'context_length_exceeded' } } });
    expect((await chat('failing')).headers['x-gateway-target']).toBe('b/beta');
    // alpha-slow never answers within its 150 ms: a route that names `timeout` moves on to beta.
    fc.next({ kind: 'stall' });
    const res = await chat('patient');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-gateway-target']).toBe('b/beta');
    expect(fb.requests).toHaveLength(4);
    // This request's own ledger rows (charges land after the answer): one, at beta's price; the timed-out attempt none.
    const charged = await vi.waitFor(
      async () => {
        const rows = await gw.services.db.selectFrom('usage_ledger').select(['model', 'channel', 'cost_micros']).where('request_id', '=', String(res.headers['x-request-id'])).execute();
        expect(rows.length).toBeGreaterThan(0);
        return rows.map((r) => ({ ...r, cost_micros: Number(r.cost_micros) }));
      },
      { timeout: 5_000, interval: 20 },
    );
    expect(charged).toEqual([{ model: 'beta', channel: 'b', cost_micros: 10 * 3 + 5 * 4 }]);
  });

  it('answers a failure the route does not name, and never resends one that may have run upstream', async () => {
    fa.next({ kind: 'status', status: 400, body: { error: { message: 'bad request', type: 'invalid_request_error' } } });
    expect((await chat('failing')).statusCode).toBe(400);
    // strict fails over on the defaults (connect, 429, 5xx): the refused connection moves on, the timeout is answered.
    fc.next({ kind: 'stall' });
    const res = await chat('strict');
    expect(res.statusCode).toBe(504);
    expect(fb.requests).toHaveLength(0);
    expect(fc.requests).toHaveLength(1);
  });
});

describe('cooldown', () => {
  it('skips a target that failed twice within the window, and tries it again once the cooldown has passed', async () => {
    fa.next({ kind: 'status', status: 500 }).next({ kind: 'status', status: 500 });
    expect(await targets('cooling', 2)).toEqual(['b/beta', 'b/beta']);
    expect(await targets('cooling', 2)).toEqual(['b/beta', 'b/beta']);
    expect(fa.requests).toHaveLength(2);
    clock += 61_000;
    expect(await targets('cooling', 1)).toEqual(['a/alpha']);
    const metrics = await gw.services.metrics.scrape();
    expect(metrics).toContain('gateway_route_cooldowns_total{route="cooling",target="a/alpha"} 1');
    expect(metrics).toContain('gateway_route_attempts_total{route="cooling",target="a/alpha",outcome="skipped"} 2');
  });
});

describe('the request log', () => {
  it('lists every attempt of a routed request: target, status, latency and cost', async () => {
    fa.next({ kind: 'status', status: 500 });
    const res = await chat('failing');
    const requestId = res.headers['x-request-id'];
    const row = await vi.waitFor(
      async () => {
        const page = (await api('GET', `/workspaces/${gw.workspace.id}/requests`)).body as { data: { request_id: string; attempts: unknown; model: string; cost: number }[] };
        const found = page.data.find((r) => r.request_id === requestId);
        expect(found).toBeDefined();
        return found!;
      },
      { timeout: 5_000, interval: 20 },
    );
    expect(row.model).toBe('beta');
    expect(row.attempts).toEqual([
      { channel: 'a', model: 'alpha', status: 500, latency_ms: 0, cost: 0 },
      { channel: 'b', model: 'beta', status: 200, latency_ms: 0, cost: row.cost },
    ]);
    expect(row.cost).toBeCloseTo((10 * 3 + 5 * 4) / 1e6, 9);
  });
});

describe('across protocols', () => {
  it('openai SDK: an OpenAI target that fails goes on to a Claude target, streamed and not', async () => {
    const claudeBefore = (await ledger()).filter((r) => r.model === 'claude-x').length;
    fa.next({ kind: 'status', status: 503 });
    const completion = await openai.chat.completions.create({ model: 'cross', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0].message.content).toBe('from claude');
    expect(claudeFake.last!.body).toMatchObject({ model: 'up-claude-x', max_tokens: 50 });
    fa.next({ kind: 'status', status: 503 });
    const stream = openai.chat.completions.stream({ model: 'cross', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0].message.content).toBe('from claude');
    // The stream's charge may land after its last event (answers go out before the commit): wait for both rows.
    const claudeRows = await vi.waitFor(
      async () => {
        const rows = (await ledger()).filter((r) => r.model === 'claude-x');
        expect(rows.length).toBeGreaterThanOrEqual(claudeBefore + 2);
        return rows;
      },
      { timeout: 5_000, interval: 20 },
    );
    expect(claudeRows.at(-1)).toEqual({ model: 'claude-x', channel: 'claude', cost_micros: 10 * 5 + 5 * 6 });
  });

  it('Anthropic SDK: a Claude target that fails goes on to an OpenAI target (through a route of routes), streamed and not', async () => {
    claudeFake.next({ kind: 'status', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'busy' } } });
    const message = await anthropic.messages.create({ model: 'cross-back', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'from a' }]);
    expect(fa.last!.body).toMatchObject({ model: 'up-alpha' });
    claudeFake.next({ kind: 'status', status: 500 });
    const final = await anthropic.messages.stream({ model: 'cross-back', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'from a' }]);
  });
});

describe('listing', () => {
  it('GET /v1/models lists each route under its public id, with the targets it may reach', async () => {
    const models = await openai.models.list();
    const split = models.data.find((m) => m.id === 'split') as unknown as { owned_by: string; route: { strategy: string; targets: string[] } };
    expect(split.owned_by).toBe('gateway');
    expect(split.route).toEqual({ strategy: 'weighted', targets: ['a/alpha', 'b/beta', 'c/gamma'] });
    expect(models.data.find((m) => m.id === 'cross-back')).toMatchObject({ route: { targets: ['claude/claude-x', 'a/alpha'] } });
  });
});
