// The operator's overlay folder (GATEWAY_OVERLAY_DIR) and a reload that tells the truth: a channel, a protocol, a
// catalogue entry and its request schema added by files in the overlay serve requests; a secret written to the overlay's
// gateway.env enables a channel at the next reload; protocol and schema edits apply; a catalogue edit is refused naming
// the entry that needs a restart; a reload that changes nothing says so.
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { ConfigError } from '../src/base/errors.js';
import { loadConfig } from '../src/compile/load-config.js';
import { adminApi, type AdminApi } from './kit/admin-api.js';
import { json } from './kit/fake-http.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';

const ops = newAdminToken();
const overlay = mkdtempSync(join(tmpdir(), 'gateway-overlay-'));
const seen: { path?: string; authorization?: string; body: Record<string, unknown> }[] = [];
let upstream: Server;
let gw: TestGateway;
let api: AdminApi;

const write = (path: string, text: string) => {
  mkdirSync(join(overlay, path, '..'), { recursive: true });
  writeFileSync(join(overlay, path), text);
};

const protocol = (path: string) => `id: pages
dialect: relay
auth: { header: authorization, value: "Bearer {{ credential }}" }
operations:
  ocr:
    path: ${path}
    usage:
      from: "{{ answer.usage }}"
      tokens: { inputTokens: "{{ usage.prompt_tokens }}", outputTokens: "{{ usage.completion_tokens }}" }
`;
const channel = (id: string, model: string, keyVariable: string, baseUrl: string) =>
  `id: ${id}\nprotocol: pages\nbaseUrl: ${baseUrl}\ncredential: { env: ${keyVariable} }\nmodels:\n  - id: ${model}\n    kind: ocr\n    price: { inputPerMillion: 1000, outputPerMillion: 2000 }\n`;
const schema = (required: string[]) => JSON.stringify({ $id: 'requests/ocr', type: 'object', required, properties: { model: { type: 'string', minLength: 1 }, document: { type: 'string' } } });

const ocr = (model: string, body: Record<string, unknown> = { document: 'https://example.com/a.pdf' }) =>
  gw.app.inject({ method: 'POST', url: '/v1/ocr', headers: { authorization: `Bearer ${gw.key}` }, payload: { model, ...body } });

beforeAll(async () => {
  upstream = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    seen.push({ path: req.url, authorization: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
    json(res, 200, { pages: [{ index: 0, markdown: '# Page' }], usage: { prompt_tokens: 10, completion_tokens: 4 } });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  write('catalogue/ocr.yaml', '- name: ocr\n  modelKind: ocr\n  method: [POST]\n  path: /v1/ocr\n  scope: llm.ocr\n  requestSchema: requests/ocr\n  bodyLimit: 1048576\n  handler: pipeline\n  pipeline: { dialect: relay, operation: ocr }\n');
  write('schemas/requests/ocr.json', schema(['model']));
  write('channels/protocols/pages.yaml', protocol('/ocr'));
  write('channels/reader.yaml', channel('reader', 'reader-1', 'OVERLAY_READER_KEY', baseUrl));
  write('channels/late.yaml', channel('late', 'late-1', 'OVERLAY_LATE_KEY', baseUrl));
  gw = await startGateway({
    channels: { plain: chatChannel('plain', baseUrl) },
    extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`,
    env: { GATEWAY_OVERLAY_DIR: overlay, OVERLAY_READER_KEY: 'sk-reader', OVERLAY_LATE_KEY: '' },
    listen: true,
  });
  api = await adminApi(gw.url, ops.token);
});
afterAll(async () => {
  await gw?.close();
  await new Promise((resolve) => upstream?.close(resolve));
  rmSync(overlay, { recursive: true, force: true });
});

describe('the overlay folder', () => {
  it('serves a channel, protocol, catalogue entry and request schema added through it, billed by reported usage', async () => {
    const answer = await ocr('reader-1');
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ pages: [{ markdown: '# Page' }], cost: { amount: (10 * 1000 + 4 * 2000) / 1e6, currency: 'USD' } });
    expect(seen.at(-1)).toEqual({ path: '/v1/ocr', authorization: 'Bearer sk-reader', body: { model: 'reader-1', document: 'https://example.com/a.pdf' } });
    expect((await ocr('reader-1', { document: 5 })).statusCode).toBe(400);
  });

  it('refuses a channel id both shipped and in the overlay, unless the overlay file says overrides: true', async () => {
    const clash = mkdtempSync(join(tmpdir(), 'gateway-overlay-clash-'));
    try {
      mkdirSync(join(clash, 'channels'));
      writeFileSync(join(clash, 'channels', 'plain.yaml'), chatChannel('plain', 'http://127.0.0.1:9/v2'));
      const env = { GATEWAY_OVERLAY_DIR: clash, DATABASE_URL: process.env.DATABASE_URL };
      const problems = await loadConfig(join(gw.dir, 'config.yaml'), { env }).then(() => [], (err: ConfigError) => err.problems);
      expect(problems).toEqual([expect.stringMatching(/channels\/plain\.yaml:1:5 \/id channel "plain" is already defined in .*channels\/plain\.yaml: give this one another id, or say "overrides: true" to take the place of the shipped one$/)]);
      writeFileSync(join(clash, 'channels', 'plain.yaml'), `overrides: true\n${chatChannel('plain', 'http://127.0.0.1:9/v2')}`);
      const loaded = await loadConfig(join(gw.dir, 'config.yaml'), { env });
      expect(loaded.channels.filter((c) => c.id === 'plain').map((c) => c.baseUrl)).toEqual(['http://127.0.0.1:9/v2']);
    } finally {
      rmSync(clash, { recursive: true, force: true });
    }
  });
});

describe('a reload', () => {
  it('says when nothing changed', async () => {
    const answer = await api('POST', '/reload');
    expect(answer.body).toMatchObject({ reloaded: true, changes: [], channels_disabled: ['channel "late" is disabled: environment variable OVERLAY_LATE_KEY is not set'] });
  });

  it("enables a channel once its secret is in the overlay's gateway.env, without a restart", async () => {
    expect((await ocr('late-1')).statusCode).toBe(503);
    write('gateway.env', '# read at every load\nOVERLAY_LATE_KEY=sk-late\n');
    const answer = await api('POST', '/reload');
    expect(answer.body).toMatchObject({ reloaded: true, changes: ['channel "late" is enabled'], channels_disabled: [] });
    expect((await ocr('late-1')).statusCode).toBe(200);
    expect(seen.at(-1)?.authorization).toBe('Bearer sk-late');
  });

  it('applies an edited protocol and request schema', async () => {
    write('channels/protocols/pages.yaml', protocol('/ocr/v2'));
    write('schemas/requests/ocr.json', schema(['model', 'document']));
    const answer = await api('POST', '/reload');
    expect(answer.body.changes).toEqual(['protocol "pages" changed', 'request schema "requests/ocr" changed']);
    const missing = await ocr('reader-1', {});
    expect([missing.statusCode, missing.json().error.message]).toEqual([400, 'invalid request body at /: missing required field "document"']);
    expect((await ocr('reader-1')).statusCode).toBe(200);
    expect(seen.at(-1)?.path).toBe('/v1/ocr/v2');
  });

  it('refuses a catalogue change, naming the entry that needs a restart, and keeps serving', async () => {
    write('catalogue/scan.yaml', '- name: scan\n  modelKind: ocr\n  method: [POST]\n  path: /v1/scan\n  scope: llm.ocr\n  bodyLimit: 1048576\n  handler: pipeline\n  pipeline: { dialect: relay, operation: ocr }\n');
    try {
      const refused = await api('POST', '/reload');
      expect([refused.status, refused.body.error.code]).toEqual([400, 'config_invalid']);
      expect(refused.body.error.message).toContain('endpoint "scan" added: the catalogue\'s routes are registered when the gateway starts; restart it to apply this');
      expect((await ocr('reader-1')).statusCode).toBe(200);
    } finally {
      rmSync(join(overlay, 'catalogue', 'scan.yaml'));
    }
  });
});
