// OpenTelemetry traces over OTLP/HTTP: received by a collector started here, checked for their tree, GenAI attributes and trace context.
import { listRequestLogs } from '../src/request-logs/repository.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, repoRoot, startGateway, type TestGateway, testModels } from './kit/gateway.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number };
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** An OTLP/HTTP trace receiver on loopback: keeps every span of every JSON export. */
class OtlpReceiver {
  readonly spans: OtlpSpan[] = [];
  readonly contentTypes: string[] = [];
  private server!: Server;
  url = '';

  async start() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.contentTypes.push(String(req.headers['content-type']));
        if (req.url === '/v1/traces') {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
          for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) this.spans.push(...ss.spans);
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** An attribute's value as a plain JS value. */
function attr(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if ('intValue' in value) return Number(value.intValue);
  return Object.values(value)[0];
}

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

let fake: FakeUpstream;
let receiver: OtlpReceiver;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  receiver = await new OtlpReceiver().start();
});
afterAll(async () => {
  await receiver.close();
  await fake.close();
});

const gatewayWith = (telemetry: string) =>
  startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat + testModels.flatChat }) }, extraConfig: `telemetry:\n${telemetry}` });

const chat = (gw: TestGateway, key: string, headers: Record<string, string> = {}) =>
  gw.app.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: { authorization: `Bearer ${key}`, ...headers },
    payload: { model: 'fake-chat', max_tokens: 16, messages: [{ role: 'user', content: 'the secret prompt' }] },
  });

/** The request span of `requestId` and the spans below it, once its tree has been exported. */
async function treeOf(gw: TestGateway, requestId: string) {
  let root: OtlpSpan | undefined;
  await expect
    .poll(async () => {
      await gw.services.tracing!.flush();
      root = receiver.spans.find((s) => attr(s, 'gateway.request.id') === requestId);
      return root !== undefined && receiver.spans.some((s) => s.parentSpanId === root!.spanId && s.name === 'settle');
    }, { timeout: 10_000 })
    .toBe(true);
  const children = receiver.spans.filter((s) => s.parentSpanId === root!.spanId);
  return { root: root!, children, child: (name: string) => children.find((s) => s.name === name) };
}

describe('tracing over OTLP/HTTP', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await gatewayWith(`  otlp:\n    endpoint: ${receiver.url}\n  serviceName: gateway-under-test\n`);
  });
  afterAll(() => gw.close());

  it("exports a request's span under the client's trace, with auth, reserve, the upstream call and settle as its children", async () => {
    const res = await chat(gw, gw.key, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
    expect(res.statusCode).toBe(200);
    const { root, children, child } = await treeOf(gw, res.headers['x-request-id'] as string);
    expect(root).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN, name: 'POST /v1/chat/completions', kind: 2 });
    expect(children.map((s) => s.name).sort()).toEqual(['POST', 'auth', 'reserve', 'settle']);
    for (const span of children) expect(span.traceId).toBe(CLIENT_TRACE);
    const upstream = child('POST')!;
    expect(upstream.kind).toBe(3);
    expect(attr(upstream, 'url.full')).toBe(`${fake.url}/v1/chat/completions`);
    // The upstream got the trace context, naming the upstream call's span as its parent.
    expect(fake.last!.headers.traceparent).toBe(`00-${CLIENT_TRACE}-${upstream.spanId}-01`);
    expect(receiver.contentTypes).toContain('application/json');
  });

  it("keeps the request's trace id on its request-log row", async () => {
    const res = await chat(gw, gw.key, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
    await gw.services.requestLogs.commitQueued();
    const { rows } = await listRequestLogs(gw.services.db, { workspaceId: gw.workspace.id, limit: 1 });
    expect(rows[0]).toMatchObject({ request_id: res.headers['x-request-id'], trace_id: CLIENT_TRACE });
  });

  it('puts the GenAI attributes, the key, the workspace and the cost on the request span', async () => {
    const res = await chat(gw, gw.key);
    const { root, child } = await treeOf(gw, res.headers['x-request-id'] as string);
    const key = await gw.services.db.selectFrom('api_keys').select('id').where('workspace_id', '=', gw.workspace.id).executeTakeFirstOrThrow();
    // 12 input tokens at 2.0 and 7 output tokens at 10.0 USD per million.
    const cost = (12 * 2 + 7 * 10) / 1e6;
    expect({
      operation: attr(root, 'gen_ai.operation.name'),
      model: attr(root, 'gen_ai.request.model'),
      provider: attr(root, 'gen_ai.provider.name'),
      maxTokens: attr(root, 'gen_ai.request.max_tokens'),
      input: attr(root, 'gen_ai.usage.input_tokens'),
      output: attr(root, 'gen_ai.usage.output_tokens'),
      workspace: attr(root, 'gateway.workspace.id'),
      key: attr(root, 'gateway.key.id'),
      cost: attr(root, 'gateway.cost'),
      status: attr(root, 'http.response.status_code'),
    }).toEqual({ operation: 'chat', model: 'fake-chat', provider: 'fake', maxTokens: 16, input: 12, output: 7, workspace: gw.workspace.id, key: key.id, cost, status: 200 });
    expect(attr(child('settle')!, 'gen_ai.usage.output_tokens')).toBe(7);
    expect(attr(child('auth')!, 'gateway.key.id')).toBe(key.id);
  });

  it('ends a stream\'s span once the stream is over and its charge settled, with the streamed usage', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { authorization: `Bearer ${gw.key}` },
      payload: { model: 'fake-chat', max_tokens: 16, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.body).toContain('data: [DONE]');
    const { root, children } = await treeOf(gw, res.headers['x-request-id'] as string);
    expect(children.map((s) => s.name).sort()).toEqual(['POST', 'auth', 'reserve', 'settle']);
    expect({ stream: attr(root, 'gateway.stream'), input: attr(root, 'gen_ai.usage.input_tokens'), output: attr(root, 'gen_ai.usage.output_tokens') }).toEqual({ stream: true, input: 12, output: 7 });
  });

  it('exports no prompt or completion text unless asked to', async () => {
    fake.chat = { ...fake.chat, text: 'the secret completion' };
    const res = await chat(gw, gw.key);
    await treeOf(gw, res.headers['x-request-id'] as string);
    const exported = JSON.stringify(receiver.spans);
    expect(exported).not.toContain('secret prompt');
    expect(exported).not.toContain('secret completion');
  });

  it('marks a reservation refused by a spent budget as an error, with the 402 on the request span', async () => {
    const key = await gw.newKey({ spendCapMicros: 0, spendCapPeriod: 'daily' });
    const res = await chat(gw, key);
    expect(res.statusCode).toBe(402);
    const requestId = res.headers['x-request-id'] as string;
    let root: OtlpSpan | undefined;
    await expect
      .poll(async () => {
        await gw.services.tracing!.flush();
        root = receiver.spans.find((s) => attr(s, 'gateway.request.id') === requestId);
        return root;
      })
      .toBeDefined();
    expect(attr(root!, 'http.response.status_code')).toBe(402);
    const reserve = receiver.spans.find((s) => s.parentSpanId === root!.spanId && s.name === 'reserve')!;
    expect(reserve.status?.code).toBe(2);
    expect(attr(reserve, 'error.type')).toBe('spend_cap_exhausted');
    expect(receiver.spans.some((s) => s.parentSpanId === root!.spanId && s.name === 'POST')).toBe(false);
  });
});

describe('tracing with content capture', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await gatewayWith(`  otlp:\n    endpoint: ${receiver.url}/v1/traces\n  captureContent: true\n`);
  });
  afterAll(() => gw.close());
  afterEach(() => void (fake.chat = { ...fake.chat, text: 'Hello from the fake upstream.' }));

  it('exports the prompt and the completion when the operator turns it on', async () => {
    fake.chat = { ...fake.chat, text: 'the captured completion' };
    const res = await chat(gw, gw.key);
    const { root } = await treeOf(gw, res.headers['x-request-id'] as string);
    expect(JSON.parse(attr(root, 'gen_ai.input.messages') as string)).toEqual([{ role: 'user', content: 'the secret prompt' }]);
    expect(attr(root, 'gen_ai.output.messages')).toContain('the captured completion');
  });
});

/** Starts a gateway in a child process, sends one chat request and lists the OpenTelemetry packages the process loaded. */
async function otelPackagesLoaded(telemetry: string): Promise<string[]> {
  const script = `
    const { startGateway, chatChannel } = await import('./test/kit/gateway.ts');
    const gw = await startGateway({ channels: { fake: chatChannel('fake', process.argv[1] + '/v1') }, extraConfig: process.argv[2] });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: 'Bearer ' + gw.key }, payload: { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] } });
    if (res.statusCode !== 200) throw new Error('status ' + res.statusCode);
    const loaded = await globalThis.loadedModules();
    await gw.close();
    console.log(JSON.stringify([...new Set(loaded.map((u) => /node_modules\\/(@opentelemetry\\/[^/]+)/.exec(u)?.[1]).filter(Boolean))]));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--import', './test/kit/loaded-modules.ts', '--input-type=module', '-e', script, fake.url, telemetry], {
    cwd: repoRoot,
    env: { ...process.env, GATEWAY_TEST_DATABASE: 'sqlite' },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as string[];
}

describe('tracing off', () => {
  // Two gateways started in child processes (tsx compiling the app in each): the process layer's time, not 30 s.
  it('loads no OpenTelemetry SDK when off, and the SDK with its exporter and undici instrumentation when on', { timeout: 90_000 }, async () => {
    const [off, on] = await Promise.all([otelPackagesLoaded(''), otelPackagesLoaded(`telemetry:\n  otlp:\n    endpoint: ${receiver.url}\n`)]);
    expect(off.filter((p) => p !== '@opentelemetry/api')).toEqual([]);
    expect(on).toEqual(expect.arrayContaining(['@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/instrumentation-undici']));
  });

  it('is off by default: no tracing service, no span exported', async () => {
    const gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`) } });
    try {
      expect(gw.services.tracing).toBeUndefined();
      const before = receiver.spans.length;
      expect((await chat(gw, gw.key)).statusCode).toBe(200);
      expect(fake.last!.headers.traceparent).toBeUndefined();
      expect(receiver.spans.length).toBe(before);
    } finally {
      await gw.close();
    }
  });
});
