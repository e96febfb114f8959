// A relayed event stream that breaks off midway ends with an error event in its route's own envelope: OpenAI's
// `data: {"error": ...}` on an OpenAI-dialect family, Anthropic's `event: error` with `{"type": "error", ...}` on a
// family the catalogue declares `envelope: anthropic` (both added by config alone, as docs/endpoints.md writes them).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

const entry = (name: string, path: string, envelope: string) => `- name: ${name}
  modelKind: completion
  method: [POST]
  path: ${path}
  envelope: ${envelope}
  requestSchema: requests/streamed-completions
  bodyLimit: 65536
  handler: pipeline
  pipeline: { dialect: relay, operation: completions }
`;

const schema = JSON.stringify({
  $id: 'requests/streamed-completions',
  type: 'object',
  required: ['model', 'prompt'],
  properties: { model: { type: 'string', minLength: 1 }, prompt: { type: 'string' }, stream: { type: 'boolean' } },
});

const protocol = `id: streamed-completions
dialect: relay
auth: { header: authorization, value: "Bearer {{ credential }}" }
operations:
  completions:
    path: /completions
    streamFlag: stream
    usage:
      from: "{{ answer.usage }}"
      events:
        message: { from: "{{ event.usage }}", final: true }
      tokens: { inputTokens: "{{ usage.prompt_tokens }}", outputTokens: "{{ usage.completion_tokens }}" }
`;

let upstream: Server;
let gw: TestGateway;

beforeAll(async () => {
  // One event, then the connection drops: the stream breaks off before its final usage.
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"text":"Hel"}\n\n', () => setImmediate(() => res.socket?.destroy()));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  gw = await startGateway({
    listen: true,
    extraConfig: 'endpoints:\n  catalogueDir: ./catalogue\n  schemasDir: ./schemas\n',
    files: {
      'catalogue/streamed.yaml': entry('streamed-openai', '/v1/streamed-openai', 'openai') + entry('streamed-anthropic', '/v1/streamed-anthropic', 'anthropic'),
      'schemas/streamed-completions.json': schema,
    },
    protocols: { 'streamed-completions.yaml': protocol },
    channels: {
      legacy: `id: legacy\nprotocol: streamed-completions\nbaseUrl: http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1\nmodels:\n  - id: instruct\n    upstream: instruct-upstream\n    kind: completion\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n`,
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

async function streamed(path: string): Promise<string> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'instruct', prompt: 'Hello', stream: true }) });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const text = await res.text();
  // No final usage came: the call is charged its reservation, once.
  const requestId = res.headers.get('x-request-id')!;
  await gw.services.spend.commitQueued?.();
  const ledger = await ledgerForRequest(gw.services.db, requestId);
  expect(ledger).toHaveLength(1);
  expect(Number(ledger[0].cost_micros)).toBeGreaterThan(0);
  return text;
}

describe('a relayed stream that breaks off midway', () => {
  it("ends with OpenAI's error envelope on an OpenAI-dialect family, after the event that came", async () => {
    const text = await streamed('/v1/streamed-openai');
    const events = text.trim().split('\n\n');
    expect(events[0]).toBe('data: {"text":"Hel"}');
    const last = events.at(-1)!;
    expect(last.startsWith('data: ')).toBe(true);
    const body = JSON.parse(last.slice('data: '.length));
    expect(body.error).toMatchObject({ type: expect.any(String), message: expect.stringContaining('legacy') });
    expect(body.type).toBeUndefined();
  });

  it("ends with Anthropic's error event on a family whose catalogue entry says envelope: anthropic", async () => {
    const text = await streamed('/v1/streamed-anthropic');
    const events = text.trim().split('\n\n');
    expect(events[0]).toBe('data: {"text":"Hel"}');
    const [eventLine, dataLine] = events.at(-1)!.split('\n');
    expect(eventLine).toBe('event: error');
    const body = JSON.parse(dataLine.slice('data: '.length));
    expect(body).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.stringContaining('legacy') } });
  });
});
