// Every endpoint against a table of malformed inputs: each answers 4xx in its typed envelope, never 5xx, in a bounded body, with no upstream call and no stored file.
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { fileRowCount, multipart } from './kit/files.js';
import { chatChannel, repoRoot, startGateway, testModels, type TestGateway } from './kit/gateway.js';
import type { EndpointConfig } from '../src/config/types.js';
import { html, png } from './kit/media-samples.js';

const MiB = 1024 * 1024;
/** Largest error body any malformed input may produce. */
const MAX_ERROR_BYTES = 4096;

interface Input {
  name: string;
  method: 'GET' | 'POST' | 'DELETE' | 'HEAD';
  url: string;
  headers?: Record<string, string>;
  /** Built lazily, so the table stays cheap until a row runs. */
  payload?: () => string | Buffer;
  /** The Anthropic envelope (messages route) instead of OpenAI's. */
  anthropic?: boolean;
  /** Sent without an API key (the row is about authentication). */
  noKey?: boolean;
}

let fake: FakeUpstream;
let gw: TestGateway;
let fileId: string;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ listen: true, channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat + testModels.fakeEval }) } });
  const form = multipart([
    { name: 'file', value: png(), filename: 'a.png', contentType: 'image/png' },
    { name: 'purpose', value: 'vision' },
  ]);
  fileId = (await gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload })).json().id;
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const json = { 'content-type': 'application/json' };
const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

/** A valid body per JSON endpoint, and where an open field sits in it. */
const jsonRoutes = [
  { route: '/v1/chat/completions', anthropic: false, valid: { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] }, limit: 16 * MiB },
  { route: '/api/v1/messages', anthropic: true, valid: { model: 'fake-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }, limit: 16 * MiB },
  { route: '/api/v1/evaluate', anthropic: false, valid: { model: 'fake-eval', state: 's', questions: { q: { type: 'boolean', instructions: 'ok?' } } }, limit: 4 * MiB },
];

function jsonBodyInputs(): Input[] {
  return jsonRoutes.flatMap(({ route, anthropic, valid, limit }) => {
    const withField = (field: string, raw: string) => `${JSON.stringify(valid).slice(0, -1)},${JSON.stringify(field)}:${raw}}`;
    const replaced = (field: string, value: unknown) => JSON.stringify({ ...valid, [field]: value });
    const rows: Omit<Input, 'method' | 'url' | 'anthropic'>[] = [
      { name: 'depth: arrays 10,000 deep in an open field', headers: json, payload: () => withField('metadata', nestedArrays(10_000)) },
      { name: 'depth: objects 100,000 deep in an open field', headers: json, payload: () => withField('metadata', nestedObjects(100_000)) },
      { name: 'depth: 65 levels inside the state or content', headers: json, payload: () => withField('extra', nestedArrays(65)) },
      { name: 'size: one byte over the route limit', headers: json, payload: () => withField('pad', JSON.stringify('x'.repeat(limit))) },
      { name: 'size: a 5 MiB model id', headers: json, payload: () => replaced('model', 'm'.repeat(5 * MiB)) },
      { name: 'types: the body is an array', headers: json, payload: () => '[]' },
      { name: 'types: the body is a string', headers: json, payload: () => '"hello"' },
      { name: 'types: the body is a number', headers: json, payload: () => '42' },
      { name: 'types: the body is null', headers: json, payload: () => 'null' },
      { name: 'types: model is a number', headers: json, payload: () => replaced('model', 7) },
      { name: 'types: model is an object', headers: json, payload: () => replaced('model', { id: 'fake-chat' }) },
      { name: 'types: model is empty', headers: json, payload: () => replaced('model', '') },
      { name: 'types: a number too large for a double', headers: json, payload: () => withField('max_tokens', '1e400') },
      { name: 'types: the main list is an object', headers: json, payload: () => replaced(route.endsWith('evaluate') ? 'questions' : 'messages', route.endsWith('evaluate') ? [] : { role: 'user' }) },
      { name: 'encodings: invalid UTF-8 bytes', headers: json, payload: () => bytes('{"model":"', [0xc3, 0x28, 0xff], '"}') },
      { name: 'encodings: UTF-16 with a byte-order mark', headers: json, payload: () => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(JSON.stringify(valid), 'utf16le')]) },
      { name: 'encodings: an overlong UTF-8 encoding of "/"', headers: json, payload: () => bytes('{"model":"a', [0xc0, 0xaf], '"}') },
      { name: 'encodings: a lone surrogate in the model id', headers: json, payload: () => replaced('model', '\ud800') },
      { name: 'syntax: truncated JSON', headers: json, payload: () => JSON.stringify(valid).slice(0, 20) },
      { name: 'syntax: trailing garbage after the object', headers: json, payload: () => `${JSON.stringify(valid)} trailing` },
      { name: 'syntax: an empty body', headers: json, payload: () => '' },
      { name: 'syntax: only whitespace', headers: json, payload: () => ' \n\t ' },
      { name: 'keys: "__proto__" at the top', headers: json, payload: () => withField('__proto__', '{"polluted":true}') },
      { name: 'keys: "__proto__" nested in an open field', headers: json, payload: () => withField('metadata', '{"__proto__":{"polluted":true}}') },
      { name: 'keys: "constructor.prototype"', headers: json, payload: () => withField('constructor', '{"prototype":{"polluted":true}}') },
      { name: 'NUL: a raw NUL byte inside a string', headers: json, payload: () => bytes('{"model":"fake', [0x00], 'chat"}') },
      { name: 'NUL: an escaped NUL in the model id', headers: json, payload: () => replaced('model', 'fake\u0000chat') },
      { name: 'NUL: a NUL byte between tokens', headers: json, payload: () => bytes('{', [0x00], '"model":"fake-chat"}') },
      { name: 'content type: text/plain', headers: { 'content-type': 'text/plain' }, payload: () => JSON.stringify(valid) },
      { name: 'content type: form-urlencoded', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: () => 'model=fake-chat' },
      { name: 'content type: multipart', ...multipartInput([{ name: 'model', value: 'fake-chat' }]) },
      { name: 'content type: XML', headers: { 'content-type': 'application/xml' }, payload: () => '<model>fake-chat</model>' },
      { name: 'content type: JSON with a non-UTF-8 charset and Latin-1 bytes', headers: { 'content-type': 'application/json; charset=iso-8859-1' }, payload: () => bytes('{"model":"caf', [0xe9], '"}') },
      { name: 'content type: missing, with a body', headers: {}, payload: () => JSON.stringify(valid) },
      { name: 'content type: no body at all', headers: {} },
    ];
    if (route.endsWith('evaluate')) {
      rows.push(
        { name: 'types: state is a number', headers: json, payload: () => replaced('state', 12) },
        { name: 'limits: 21 questions', headers: json, payload: () => replaced('questions', Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`q${i}`, { type: 'boolean', instructions: 'ok?' }]))) },
        { name: 'types: an unknown question type', headers: json, payload: () => replaced('questions', { q: { type: 'essay', instructions: 'write' } }) },
        { name: 'keys: a 1 MiB unknown field name', headers: json, payload: () => withField('f'.repeat(MiB), '1') },
      );
    }
    if (route.endsWith('messages')) {
      rows.push(
        { name: 'types: max_tokens is a string', headers: json, payload: () => replaced('max_tokens', '16') },
        { name: 'types: a content block without a type', headers: json, payload: () => replaced('messages', [{ role: 'user', content: [{ text: 'hi' }] }]) },
      );
    }
    return rows.map((row) => ({ ...row, method: 'POST' as const, url: route, anthropic, name: `${route} ${row.name}` }));
  });
}

function multipartInput(parts: Parameters<typeof multipart>[0]): Pick<Input, 'headers' | 'payload'> {
  const form = multipart(parts);
  return { headers: form.headers, payload: () => form.payload };
}

function uploadInputs(): Input[] {
  const file = { name: 'file', value: png(), filename: 'a.png', contentType: 'image/png' };
  const purpose = { name: 'purpose', value: 'vision' };
  const rows: Omit<Input, 'method' | 'url'>[] = [
    { name: 'multipart without a boundary', headers: { 'content-type': 'multipart/form-data' }, payload: () => 'file=x' },
    { name: 'multipart garbage', headers: { 'content-type': 'multipart/form-data; boundary=zzz' }, payload: () => bytes([0, 1, 2, 255], ' not multipart --zz') },
    { name: 'multipart cut off inside the file', headers: { 'content-type': 'multipart/form-data; boundary=b' }, payload: () => bytes('--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nvision\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n', [...png(5000)]) },
    { name: 'multipart cut off inside a part header', headers: { 'content-type': 'multipart/form-data; boundary=b' }, payload: () => '--b\r\nContent-Disposition: form-da' },
    { name: 'multipart with only the closing boundary', headers: { 'content-type': 'multipart/form-data; boundary=b' }, payload: () => '--b--\r\n' },
    { name: 'multipart with an empty body', headers: { 'content-type': 'multipart/form-data; boundary=b' }, payload: () => '' },
    { name: 'content type: JSON', headers: json, payload: () => '{"purpose":"vision"}' },
    { name: 'content type: text/plain', headers: { 'content-type': 'text/plain' }, payload: () => 'hello' },
    { name: 'content type: missing', headers: {}, payload: () => 'hello' },
    { name: 'types: a file without a purpose', ...multipartInput([file]) },
    { name: 'types: a purpose without a file', ...multipartInput([purpose]) },
    { name: 'types: two files', ...multipartInput([file, file, purpose]) },
    { name: 'types: the file under another field name', ...multipartInput([{ ...file, name: 'image' }, purpose]) },
    { name: 'types: an unknown purpose', ...multipartInput([file, { name: 'purpose', value: 'fine-tune' }]) },
    { name: 'types: an HTML file', ...multipartInput([{ name: 'file', value: html, filename: 'a.html', contentType: 'text/html' }, purpose]) },
    { name: 'types: an empty file', ...multipartInput([{ name: 'file', value: Buffer.alloc(0), filename: 'a.png', contentType: 'image/png' }, purpose]) },
    { name: 'size: a 512 KiB purpose', ...multipartInput([file, { name: 'purpose', value: 'p'.repeat(512 * 1024) }]) },
    { name: 'size: 65 form fields', ...multipartInput([file, ...Array.from({ length: 65 }, () => purpose)]) },
    { name: 'keys: a "__proto__" field', ...multipartInput([{ name: '__proto__', value: 'x' }, file, purpose]) },
    { name: 'NUL: a NUL byte in a field name', ...multipartInput([{ name: 'pur\u0000pose', value: 'vision' }, file]) },
    { name: 'NUL: a NUL byte in the purpose', ...multipartInput([file, { name: 'purpose', value: 'vis\u0000ion' }]) },
    { name: 'encodings: invalid UTF-8 in the purpose', ...multipartInput([file, { name: 'purpose', value: Buffer.from([0xff, 0xfe, 0x76]) }]) },
  ];
  return rows.map((row) => ({ ...row, method: 'POST' as const, url: '/v1/files', name: `POST /v1/files ${row.name}` }));
}

function pathAndQueryInputs(): Input[] {
  const ids: [string, string][] = [
    ['an id with an encoded NUL', 'file_%00'],
    ['an id of 200 characters', `file_${'0'.repeat(195)}`],
    ['a malformed percent-encoding', '%E0%A4%A'],
    ['invalid UTF-8 percent-encoded', '%FF%FE'],
    ['"__proto__"', '__proto__'],
    ['an encoded path traversal', '..%2F..%2Fetc%2Fpasswd'],
    ['an unknown well-formed id', `file_${'0'.repeat(28)}`],
  ];
  const rows: Input[] = [];
  for (const [what, id] of ids) {
    rows.push({ name: `GET /v1/files/{id} with ${what}`, method: 'GET', url: `/v1/files/${id}` });
    rows.push({ name: `DELETE /v1/files/{id} with ${what}`, method: 'DELETE', url: `/v1/files/${id}` });
    rows.push({ name: `GET /api/v1/files/{id}/content with ${what}`, method: 'GET', url: `/api/v1/files/${id}/content` });
  }
  const content = (query: string) => `/api/v1/files/FILE/content?${query}`;
  for (const [what, query] of [
    ['an empty token', 'token='],
    ['a NUL token', 'token=%00'],
    ['a garbage token', 'token=a.b.c'],
    ['two tokens', 'token=a&token=b'],
    ['a token with invalid UTF-8', 'token=%FF.1.%FE'],
    ['a token of another file', 'token=auto.9999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ] as const) {
    rows.push({ name: `GET /api/v1/files/{id}/content with ${what}`, method: 'GET', url: content(query), noKey: true });
    rows.push({ name: `HEAD /api/v1/files/{id}/content with ${what}`, method: 'HEAD', url: content(query), noKey: true });
  }
  for (const query of ['limit=abc', 'limit=0', 'limit=101', 'limit=1e400', 'limit=1&limit=2', 'limit=-1', 'order=sideways', 'after=%00', 'after=__proto__', 'after=file_zz', 'purpose=a&purpose=b']) {
    rows.push({ name: `GET /v1/files?${query}`, method: 'GET', url: `/v1/files?${query}` });
  }
  for (const query of ['since=2025-02-30', 'since=%00', 'since=yesterday', 'since=2025-01-02&until=2025-01-01', 'since=a&since=b', 'since=9999999999999', 'until=2025-02-30T10:00:00Z', 'since=%FF%FE']) {
    rows.push({ name: `GET /v1/usage?${query}`, method: 'GET', url: `/v1/usage?${query}` });
  }
  return rows;
}

/** The endpoint catalogue as the gateway reads it, so rows below cover every route, including ones added later. */
function catalogue(): Pick<EndpointConfig, 'method' | 'path' | 'auth' | 'envelope'>[] {
  const dir = join(repoRoot, 'catalogue');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseYaml(readFileSync(join(dir, f), 'utf8')) as EndpointConfig[])
    .map((e) => ({ method: e.method, path: e.path, auth: e.auth ?? 'key', envelope: e.envelope ?? 'openai' }));
}

/** Inputs every catalogue route gets, whatever it does: a bad URL, and (where a key is needed) bad credentials. */
function everyRouteInputs(): Input[] {
  const rows: Input[] = [];
  for (const endpoint of catalogue()) {
    const method = endpoint.method[0] as Input['method'];
    const path = endpoint.path.replace(/:[a-z_]+/g, 'FILE');
    const anthropic = endpoint.envelope === 'anthropic';
    const headers = ['POST', 'PUT', 'PATCH'].includes(method) ? json : {};
    const payload = method === 'POST' ? () => '{}' : undefined;
    rows.push({ name: `${method} ${path} with a 10 KB query`, method, url: `${path}?q=${'x'.repeat(10 * 1024)}`, anthropic });
    rows.push({ name: `${method} ${path} with a bad percent-encoding in a 10 KB path`, method, url: `${path}/%zz${'y'.repeat(10 * 1024)}`, anthropic });
    if (endpoint.auth === 'key') {
      rows.push({ name: `${method} ${path} with an unknown key`, method, url: path, headers: { ...headers, authorization: 'Bearer sk-gw-unknown' }, payload, anthropic, noKey: true });
      rows.push({ name: `${method} ${path} with two different keys`, method, url: path, headers: { ...headers, authorization: 'Bearer KEY', 'x-api-key': 'sk-gw-other' }, payload, anthropic, noKey: true });
      rows.push({ name: `${method} ${path} with a Basic authorization`, method, url: path, headers: { ...headers, authorization: 'Basic dXNlcjpwYXNz' }, payload, anthropic, noKey: true });
      rows.push({ name: `${method} ${path} with a 10 KB key`, method, url: path, headers: { ...headers, 'x-api-key': `sk-${'k'.repeat(10 * 1024)}` }, payload, anthropic, noKey: true });
      rows.push({ name: `${method} ${path} without a key`, method, url: path, headers, payload, anthropic, noKey: true });
    }
  }
  return rows;
}

/** Requests the HTTP parser itself refuses; answered on the raw socket. */
const rawInputs: [string, string][] = [
  ['a NUL byte in a header value', 'GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Test: a\u0000b\r\n\r\n'],
  ['20 KB of headers', `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20 * 1024)}\r\n\r\n`],
  ['a request line that is not HTTP', 'HELLO\r\n\r\n'],
  ['both Content-Length and Transfer-Encoding', 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
  ['a malformed chunk size', 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'],
  ['a header name with a space', 'GET /v1/models HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n'],
];

function expectTypedError(status: number, body: string, anthropic: boolean) {
  expect(status, body.slice(0, 300)).toBeGreaterThanOrEqual(400);
  expect(status, body.slice(0, 300)).toBeLessThan(500);
  expect(Buffer.byteLength(body)).toBeLessThan(MAX_ERROR_BYTES);
  const parsed = JSON.parse(body);
  if (anthropic) {
    expect(parsed).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
  } else {
    expect(parsed.error).toMatchObject({ type: expect.any(String), code: expect.any(String), message: expect.any(String) });
    expect(parsed.error).toHaveProperty('param');
  }
}

const table = [...jsonBodyInputs(), ...uploadInputs(), ...pathAndQueryInputs(), ...everyRouteInputs()];

describe('malformed inputs to every endpoint', () => {
  let upstreamCalls = 0;
  let files = 0;
  beforeAll(async () => {
    upstreamCalls = fake.requests.length;
    files = await fileRowCount(gw);
  });

  it('holds a table of at least 250 malformed inputs', () => {
    console.info(`malformed-input table: ${table.length} HTTP inputs + ${rawInputs.length} raw socket inputs = ${table.length + rawInputs.length}`);
    expect(table.length + rawInputs.length).toBeGreaterThanOrEqual(250);
  });

  it.each(table.map((input) => [input.name, input] as const))('answers 4xx in the typed envelope to %s', async (_name, input) => {
    const url = input.url.replace('FILE', fileId);
    const given = Object.fromEntries(Object.entries(input.headers ?? {}).map(([k, v]) => [k, v.replace('KEY', gw.key)]));
    const headers = { ...(input.noKey ? {} : { authorization: `Bearer ${gw.key}` }), ...given };
    const res = await gw.app.inject({ method: input.method, url, headers, payload: input.payload?.() });
    if (input.method === 'HEAD') {
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
    } else expectTypedError(res.statusCode, res.body, input.anthropic ?? false);
  });

  it.each(rawInputs)('answers %s on the socket with 4xx in the typed envelope', async (_name, raw) => {
    const socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.on('error', () => undefined);
    socket.write(raw);
    const chunks: Buffer[] = [];
    for await (const chunk of socket) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
    expectTypedError(status, text.slice(text.indexOf('\r\n\r\n') + 4), false);
  });

  it('let no malformed input reach an upstream or store a file', async () => {
    expect(fake.requests.length).toBe(upstreamCalls);
    expect(await fileRowCount(gw)).toBe(files);
  });
});
