// Issue 27: the malformed-input table grown onto the newer routes (videos as JSON and multipart, family task routes,
// image generations and edits, Responses, task reads and lists, dashboard forms). Each answers 4xx, never 5xx, in a
// bounded body (the API routes in their typed envelope), with no upstream call and no stored file. Item 8: a multipart
// part without a name is a 400 on every multipart route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, PASSWORD } from './kit/dashboard.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { fileRowCount, multipart } from './kit/files.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { html, png } from './kit/media-samples.js';
import { runwayChannel, tasksConfig } from './kit/tasks.js';

const KiB = 1024;
const MAX_ERROR_BYTES = 4096;
/** Dashboard answers are pages; still bounded. */
const MAX_PAGE_BYTES = 64 * KiB;

interface Input {
  name: string;
  method: 'GET' | 'POST' | 'HEAD';
  url: string;
  headers?: Record<string, string>;
  payload?: () => string | Buffer;
  /** A dashboard form: signed in as an owner, with the session's CSRF token unless the row says otherwise. */
  dashboard?: { csrf?: boolean; signedIn?: boolean };
}

let fake: FakeUpstream;
let gw: TestGateway;
let session = { cookie: '', csrf: '' };
let anonymous = { cookie: '', csrf: '' };

const channel = (url: string) => `id: media
protocol: openai-chat
baseUrl: ${url}/v1
models:
  - id: fake-chat
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
  - id: fake-image
    kind: image
    price: { perImage: { "1024x1024": 0.04 } }
`;
const videoChannel = (url: string) => `id: media-video
protocol: openai-videos
baseUrl: ${url}/v1
models:
  - id: sora-2
    kind: video
    media: { maxSeconds: 12 }
    price: { perVideoSecond: 0.10 }
`;

const cookiesOf = (setCookie: string | string[] | undefined) =>
  (Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []).map((line) => line.split(';')[0]).filter((pair) => !pair.endsWith('='));

async function browser(signIn: boolean): Promise<{ cookie: string; csrf: string }> {
  const page = await gw.app.inject({ method: 'GET', url: '/dashboard/login', remoteAddress: '10.9.9.9' });
  let cookie = cookiesOf(page.headers['set-cookie']).join('; ');
  let csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1];
  if (signIn) {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/dashboard/login',
      remoteAddress: '10.9.9.9',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: csrf, email: 'owner@example.com', password: PASSWORD }).toString(),
    });
    expect(res.statusCode).toBe(303);
    cookie = cookiesOf(res.headers['set-cookie']).filter((c) => c.startsWith('gw_dashboard=')).join('; ');
    const keys = await gw.app.inject({ method: 'GET', url: '/dashboard/settings/keys', headers: { cookie } });
    csrf = /name="_csrf" value="([^"]+)"/.exec(keys.body)![1];
    cookie = [cookie, ...cookiesOf(keys.headers['set-cookie'])].join('; ');
  }
  return { cookie, csrf };
}

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { media: channel(fake.url), 'media-video': videoChannel(fake.url), rw: runwayChannel(fake.url) }, extraConfig: tasksConfig(fake) });
  await addUser(gw.services, 'owner@example.com', [[gw.workspace, 'owner']]);
  session = await browser(true);
  anonymous = await browser(false);
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const json = { 'content-type': 'application/json' };
const bytes = (...parts: (string | number[] | Buffer)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
const big = (n: number) => 'x'.repeat(n);
const form = (parts: Parameters<typeof multipart>[0]): Pick<Input, 'headers' | 'payload'> => {
  const built = multipart(parts);
  return { headers: built.headers, payload: () => built.payload };
};
/** A part written by hand: its Content-Disposition exactly as given (e.g. without a name). */
const rawForm = (...dispositions: [string, string | Buffer][]): Pick<Input, 'headers' | 'payload'> => ({
  headers: { 'content-type': 'multipart/form-data; boundary=b' },
  payload: () => bytes(...dispositions.flatMap(([disposition, value]) => [`--b\r\nContent-Disposition: ${disposition}\r\n\r\n`, Buffer.isBuffer(value) ? value : Buffer.from(value), '\r\n']), '--b--\r\n'),
});

/** The same bad bodies every JSON route gets. */
function bodyShapes(valid: object): Omit<Input, 'method' | 'url'>[] {
  const withField = (field: string, raw: string) => `${JSON.stringify(valid).slice(0, -1)},${JSON.stringify(field)}:${raw}}`;
  return [
    { name: 'the body is an array', headers: json, payload: () => '[]' },
    { name: 'the body is a string', headers: json, payload: () => '"hello"' },
    { name: 'the body is a number', headers: json, payload: () => '42' },
    { name: 'the body is null', headers: json, payload: () => 'null' },
    { name: 'an empty body', headers: json, payload: () => '' },
    { name: 'truncated JSON', headers: json, payload: () => JSON.stringify(valid).slice(0, 15) },
    { name: 'trailing garbage', headers: json, payload: () => `${JSON.stringify(valid)} x` },
    { name: '"__proto__" at the top', headers: json, payload: () => withField('__proto__', '{"polluted":true}') },
    { name: '"constructor.prototype"', headers: json, payload: () => withField('constructor', '{"prototype":{"polluted":true}}') },
    { name: 'arrays 10,000 deep', headers: json, payload: () => withField('metadata', `${'['.repeat(10_000)}${']'.repeat(10_000)}`) },
    { name: 'invalid UTF-8', headers: json, payload: () => bytes('{"model":"', [0xc3, 0x28, 0xff], '"}') },
    { name: 'a raw NUL byte inside a string', headers: json, payload: () => bytes('{"model":"fake', [0x00], '"}') },
    { name: 'content type text/plain', headers: { 'content-type': 'text/plain' }, payload: () => JSON.stringify(valid) },
    { name: 'content type XML', headers: { 'content-type': 'application/xml' }, payload: () => '<model/>' },
    { name: 'an unknown field', headers: json, payload: () => withField('f'.repeat(300), '1') },
  ];
}

/** Each field replaced by values its schema refuses. */
function fieldValues(valid: Record<string, unknown>, bad: Record<string, unknown[]>): Omit<Input, 'method' | 'url'>[] {
  return Object.entries(bad).flatMap(([field, values]) =>
    values.map((value) => ({
      name: `${field} = ${JSON.stringify(value)?.slice(0, 40) ?? 'undefined'}`,
      headers: json,
      payload: () => JSON.stringify(value === undefined ? Object.fromEntries(Object.entries(valid).filter(([k]) => k !== field)) : { ...valid, [field]: value }),
    })),
  );
}

const notStrings = [7, true, {}, [], null];
const routeRows = (method: Input['method'], url: string, rows: Omit<Input, 'method' | 'url'>[]): Input[] => rows.map((row) => ({ ...row, method, url, name: `${method} ${url} ${row.name}` }));

function videoJsonInputs(): Input[] {
  const valid = { model: 'sora-2', prompt: 'a cat', seconds: 4 };
  return routeRows('POST', '/v1/videos', [
    ...bodyShapes(valid),
    ...fieldValues(valid, {
      model: [...notStrings, '', big(300), 'no-such-model', 'fake-chat', 'fake-image', 'sora\u00002', undefined],
      prompt: [...notStrings, '', big(33_000), undefined],
      seconds: ['abc', 0, -1, 601, 1.5, '04', '1e3', {}, [], true, 13],
      size: [7, '', '0x0', '720*1280', 'x'.repeat(40), '720x1280x3', {}],
      input_reference: [7, '', {}, { file_id: 'a', image_url: 'b' }, { other: 'x' }, big(5000), 'not a url', 'ftp://example.com/a.png', 'file_0000000000000000000000000000', 'https://127.0.0.1/a.png', { file_id: 7 }],
    }),
  ]);
}

function videoFormInputs(): Input[] {
  const model = { name: 'model', value: 'sora-2' };
  const prompt = { name: 'prompt', value: 'a cat' };
  const image = { name: 'input_reference', value: png(), filename: 'r.png', contentType: 'image/png' };
  return routeRows('POST', '/v1/videos', [
    { name: 'multipart: a part without a name', ...rawForm(['form-data', 'sora-2']) },
    { name: 'multipart: a part with an empty name', ...rawForm(['form-data; name=""', 'sora-2']) },
    { name: 'multipart: a file part without a name', ...rawForm(['form-data; name="model"', 'sora-2'], ['form-data; filename="a.png"', png()]) },
    { name: 'multipart: a part with no disposition parameters', ...rawForm(['attachment', 'x']) },
    { name: 'multipart: an unknown field', ...form([model, prompt, { name: 'colour', value: 'red' }]) },
    { name: 'multipart: a "__proto__" field', ...form([{ name: '__proto__', value: 'x' }, model, prompt]) },
    { name: 'multipart: two reference images', ...form([model, prompt, image, image]) },
    { name: 'multipart: the image under another name', ...form([model, prompt, { ...image, name: 'image' }]) },
    { name: 'multipart: an HTML reference', ...form([model, prompt, { ...image, value: html, contentType: 'text/html' }]) },
    { name: 'multipart: an empty reference', ...form([model, prompt, { ...image, value: Buffer.alloc(0) }]) },
    { name: 'multipart: no model', ...form([prompt]) },
    { name: 'multipart: no prompt', ...form([model]) },
    { name: 'multipart: seconds "abc"', ...form([model, prompt, { name: 'seconds', value: 'abc' }]) },
    { name: 'multipart: seconds 0', ...form([model, prompt, { name: 'seconds', value: '0' }]) },
    { name: 'multipart: size "big"', ...form([model, prompt, { name: 'size', value: 'big' }]) },
    { name: 'multipart: an unknown reference file', ...form([model, prompt, { name: 'input_reference[file_id]', value: 'file_0000000000000000000000000000' }]) },
    { name: 'multipart: an unknown nested reference key', ...form([model, prompt, { name: 'input_reference[url]', value: 'x' }]) },
    { name: 'multipart: a 40,000-character prompt', ...form([model, { name: 'prompt', value: big(40_000) }]) },
    { name: 'multipart: a NUL in a field name', ...form([{ name: 'mo\u0000del', value: 'sora-2' }, prompt]) },
    { name: 'multipart: invalid UTF-8 in the model', ...form([{ name: 'model', value: Buffer.from([0xff, 0xfe]) }, prompt]) },
    { name: 'multipart: without a boundary', headers: { 'content-type': 'multipart/form-data' }, payload: () => 'x' },
    { name: 'multipart: garbage', headers: { 'content-type': 'multipart/form-data; boundary=zzz' }, payload: () => bytes([0, 1, 255], ' --zz') },
    { name: 'multipart: cut off inside a part header', headers: { 'content-type': 'multipart/form-data; boundary=b' }, payload: () => '--b\r\nContent-Disposition: form-da' },
    { name: 'multipart: only the closing boundary', headers: { 'content-type': 'multipart/form-data; boundary=b' }, payload: () => '--b--\r\n' },
    { name: 'multipart: 70 fields', ...form([model, prompt, ...Array.from({ length: 70 }, () => ({ name: 'size', value: '1x1' }))]) },
  ]);
}

function familyInputs(): Input[] {
  const url = '/api/v1/runway/text_to_image';
  const valid = { model: 'gen4-image', prompt: 'a lighthouse', size: '1920x1080' };
  return [
    ...routeRows('POST', url, [
      ...bodyShapes(valid),
      ...fieldValues(valid, {
        model: [...notStrings, '', big(300), 'sora-2', 'gen4-video', 'fake-image', undefined],
        prompt: [...notStrings, '', big(33_000), undefined],
        size: [7, '', 'auto', '0x0', '1920x1080x2', big(50), {}],
      }),
      { name: 'multipart: a part without a name', ...rawForm(['form-data', 'gen4-image']) },
      { name: 'multipart: a part with an empty name', ...rawForm(['form-data; name=""', 'x']) },
      { name: 'multipart: a nameless file part', ...rawForm(['form-data; filename="a.png"', png()]) },
      { name: 'multipart: an unknown field', ...form([{ name: 'model', value: 'gen4-image' }, { name: 'prompt', value: 'p' }, { name: 'ratio', value: '1:1' }]) },
      { name: 'multipart: no prompt', ...form([{ name: 'model', value: 'gen4-image' }]) },
    ]),
    ...routeRows('POST', '/api/v1/nosuchfamily/text_to_image', [{ name: 'an unknown family', headers: json, payload: () => JSON.stringify(valid) }]),
  ];
}

function generationInputs(): Input[] {
  const valid = { model: 'fake-image', prompt: 'a lighthouse' };
  return routeRows('POST', '/v1/images/generations', [
    ...bodyShapes(valid),
    ...fieldValues(valid, {
      model: [...notStrings, '', 'fake-chat', 'sora-2', undefined],
      prompt: [...notStrings, '', big(33_000), undefined],
      n: [0, 11, -1, 1.5, '2', null],
      size: ['1x1', 'AUTO', '', 7, 'auto '],
      quality: ['ultra', '', 7, 'Auto'],
      response_format: ['gif', '', 7],
      output_compression: [101, -1, 'x'],
    }),
  ]);
}

function editInputs(): Input[] {
  const model = { name: 'model', value: 'fake-image' };
  const prompt = { name: 'prompt', value: 'make it blue' };
  const image = { name: 'image', value: png(), filename: 'a.png', contentType: 'image/png' };
  return routeRows('POST', '/v1/images/edits', [
    { name: 'multipart: a part without a name', ...rawForm(['form-data', 'fake-image']) },
    { name: 'multipart: a part with an empty name', ...rawForm(['form-data; name=""', 'x']) },
    { name: 'multipart: a nameless file part', ...rawForm(['form-data; name="model"', 'fake-image'], ['form-data; filename="a.png"', png()]) },
    { name: 'multipart: no image at all', ...form([model, prompt]) },
    { name: 'multipart: the image under another name', ...form([model, prompt, { ...image, name: 'picture' }]) },
    { name: 'multipart: two masks', ...form([model, prompt, image, { ...image, name: 'mask' }, { ...image, name: 'mask' }]) },
    { name: 'multipart: an HTML image', ...form([model, prompt, { ...image, value: html, contentType: 'text/html' }]) },
    { name: 'multipart: an empty image', ...form([model, prompt, { ...image, value: Buffer.alloc(0) }]) },
    { name: 'multipart: n "abc"', ...form([model, prompt, image, { name: 'n', value: 'abc' }]) },
    { name: 'multipart: n 99', ...form([model, prompt, image, { name: 'n', value: '99' }]) },
    { name: 'multipart: n 1e3', ...form([model, prompt, image, { name: 'n', value: '1e3' }]) },
    { name: 'multipart: size "huge"', ...form([model, prompt, image, { name: 'size', value: 'huge' }]) },
    { name: 'multipart: quality "ultra"', ...form([model, prompt, image, { name: 'quality', value: 'ultra' }]) },
    { name: 'multipart: an unknown field', ...form([model, prompt, image, { name: 'style', value: 'vivid' }]) },
    { name: 'multipart: a "__proto__" field', ...form([{ name: '__proto__', value: 'x' }, model, prompt, image]) },
    { name: 'multipart: no model', ...form([prompt, image]) },
    { name: 'multipart: a chat model', ...form([{ name: 'model', value: 'fake-chat' }, prompt, image]) },
    { name: 'multipart: no prompt', ...form([model, image]) },
    { name: 'multipart: image_url on a private address', ...form([model, prompt, { name: 'image_url', value: 'https://10.0.0.1/a.png' }]) },
    { name: 'multipart: image_url over ftp', ...form([model, prompt, { name: 'image_url', value: 'ftp://example.com/a.png' }]) },
    { name: 'multipart: image_url with credentials', ...form([model, prompt, { name: 'image_url', value: 'https://u:p@example.com/a.png' }]) },
    { name: 'multipart: image_url on another port', ...form([model, prompt, { name: 'image_url', value: 'https://example.com:8443/a.png' }]) },
    { name: 'multipart: image_url not a URL', ...form([model, prompt, { name: 'image_url', value: 'not a url' }]) },
    { name: 'multipart: image_url an unknown file', ...form([model, prompt, { name: 'image_url', value: 'file_0000000000000000000000000000' }]) },
    { name: 'multipart: image_url on the metadata address', ...form([model, prompt, { name: 'image_url[]', value: 'https://169.254.169.254/latest' }]) },
    { name: 'multipart: a NUL in a field name', ...form([{ name: 'pro\u0000mpt', value: 'x' }, model, image]) },
    { name: 'multipart: garbage', headers: { 'content-type': 'multipart/form-data; boundary=zzz' }, payload: () => bytes([0, 1, 255], ' --zz') },
    { name: 'multipart: cut off inside the image', headers: { 'content-type': 'multipart/form-data; boundary=b' }, payload: () => bytes('--b\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\n', png(3000)) },
    { name: 'content type JSON', headers: json, payload: () => JSON.stringify({ model: 'fake-image', prompt: 'p' }) },
    { name: 'content type text/plain', headers: { 'content-type': 'text/plain' }, payload: () => 'x' },
  ]);
}

function responsesInputs(): Input[] {
  const valid = { model: 'fake-chat', input: 'hello' };
  const withImage = (part: Record<string, unknown>) => ({ ...valid, input: [{ role: 'user', content: [{ type: 'input_image', ...part }] }] });
  return routeRows('POST', '/v1/responses', [
    ...bodyShapes(valid).filter((row) => row.name !== 'an unknown field'),
    ...fieldValues(valid, {
      model: [...notStrings, '', 'fake-image', 'sora-2', 'no-such-model', undefined],
      input: [7, true, {}, [1], ['text'], null, undefined],
      max_output_tokens: [0, -1, 'x', 1.5],
      stream: ['yes', 1],
      tools: [{}, [1], 'x'],
      metadata: ['x', 7, []],
      instructions: [7, {}],
      user: [7, {}],
    }),
    { name: 'an input_image with a numeric file_id', headers: json, payload: () => JSON.stringify(withImage({ file_id: 7 })) },
    { name: 'an input_image with a file_id that is not one', headers: json, payload: () => JSON.stringify(withImage({ file_id: 'nope' })) },
    { name: 'an input_image with an unknown file_id', headers: json, payload: () => JSON.stringify(withImage({ file_id: 'file_0000000000000000000000000000' })) },
    { name: 'an input list of 2,049 items', headers: json, payload: () => JSON.stringify({ ...valid, input: Array.from({ length: 2049 }, () => ({ role: 'user', content: 'x' })) }) },
  ]);
}

function taskReadInputs(): Input[] {
  const ids: [string, string][] = [
    ['an encoded NUL', 'video_%00'],
    ['200 characters', `video_${'0'.repeat(194)}`],
    ['a malformed percent-encoding', '%E0%A4%A'],
    ['invalid UTF-8', '%FF%FE'],
    ['"__proto__"', '__proto__'],
    ['an encoded traversal', '..%2F..%2Fetc%2Fpasswd'],
    ['an unknown video id', `video_${'0'.repeat(26)}`],
    ['an unknown task id', `task_${'0'.repeat(26)}`],
  ];
  const rows: Input[] = [];
  for (const [what, id] of ids) {
    rows.push({ name: `GET /v1/tasks/{id} with ${what}`, method: 'GET', url: `/v1/tasks/${id}` });
    rows.push({ name: `GET /v1/videos/{id} with ${what}`, method: 'GET', url: `/v1/videos/${id}` });
    rows.push({ name: `GET /v1/videos/{id}/content with ${what}`, method: 'GET', url: `/v1/videos/${id}/content` });
    rows.push({ name: `GET /api/v1/tasks/{id} with ${what}`, method: 'GET', url: `/api/v1/tasks/${id}` });
  }
  for (const query of ['limit=abc', 'limit=0', 'limit=101', 'limit=1e400', 'limit=1&limit=2', 'limit=-1', 'limit=%00', 'order=sideways', 'order=asc&order=desc', 'after=%00', 'after=__proto__', 'after=video_zz', 'after=task_00000000000000000000000000', `after=${big(300)}`]) {
    rows.push({ name: `GET /v1/videos?${query.slice(0, 60)}`, method: 'GET', url: `/v1/videos?${query}` });
  }
  return rows;
}

function dashboardInputs(): Input[] {
  const post = (url: string, name: string, fields: [string, string][], dashboard: Input['dashboard'] = {}): Input => ({
    name: `POST /dashboard${url} ${name}`,
    method: 'POST',
    url: `/dashboard${url}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: () => fields.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'),
    dashboard,
  });
  const anon = { signedIn: false };
  const rows: Input[] = [
    post('/login', 'with the email twice', [['email', 'a@example.com'], ['email', 'b@example.com'], ['password', 'x']], anon),
    post('/login', 'with a 10 KB email', [['email', big(10 * KiB)], ['password', 'x']], anon),
    post('/login', 'with a NUL in the email', [['email', 'owner\u0000@example.com'], ['password', 'x']], anon),
    { ...post('/login', 'with invalid UTF-8 in the email', [], anon), payload: () => 'email=%FF%FE%40example.com&password=x' },
    post('/login', 'with a 10 KB password', [['email', 'owner@example.com'], ['password', big(10 * KiB)]], anon),
    post('/login', 'with email[]', [['email[]', 'owner@example.com'], ['password', PASSWORD]], anon),
    post('/login', 'without fields', [], anon),
    post('/login', 'without the CSRF token', [['email', 'a@example.com'], ['password', 'x']], { signedIn: false, csrf: false }),
    post('/login', 'with "__proto__" fields', [['__proto__', 'x'], ['constructor', 'y'], ['email', 'a@example.com'], ['password', 'x']], anon),
    post('/setup', 'with no token', [['password', 'a long enough password'], ['confirm', 'a long enough password']], anon),
    post('/setup', 'with a malformed token', [['token', '../../etc'], ['password', 'a long enough password']], anon),
    post('/setup', 'with an unknown token', [['token', 'A'.repeat(32)], ['password', 'a long enough password'], ['confirm', 'a long enough password']], anon),
    post('/setup', 'with the token twice', [['token', 'A'.repeat(32)], ['token', 'B'.repeat(32)]], anon),
    post('/setup', 'with a 10 KB token', [['token', big(10 * KiB)]], anon),
    post('/setup', 'without the CSRF token', [['token', 'A'.repeat(32)]], { signedIn: false, csrf: false }),
    post('/settings/keys', 'with an unknown scope', [['scopes', 'root']]),
    post('/settings/keys', 'with 20 scopes', Array.from({ length: 20 }, () => ['scopes', 'llm.chat'] as [string, string])),
    post('/settings/keys', 'with an expiry off the list', [['expires', '9999']]),
    post('/settings/keys', 'with a negative cap', [['cap', '-3']]),
    post('/settings/keys', 'with cap 1e9', [['cap', '1e9']]),
    post('/settings/keys', 'with the cap twice', [['cap', '1'], ['cap', '2']]),
    post('/settings/keys', 'with a 101-character name', [['name', big(101)]]),
    post('/settings/keys', 'with the expiry twice', [['expires', '30'], ['expires', '90']]),
    post('/settings/keys', 'without the CSRF token', [['name', 'x']], { csrf: false }),
    post('/settings/keys', 'signed out', [['name', 'x']], { signedIn: false }),
    post('/settings/keys/KEY/cap', 'with cap[]', [['cap[]', '1']]),
    post('/settings/keys/KEY/cap', 'with the cap twice', [['cap', '1'], ['cap', '2']]),
    post('/settings/keys/KEY/cap', 'without a cap', []),
    post('/settings/keys/KEY/cap', 'with cap "abc"', [['cap', 'abc']]),
    post('/settings/keys/KEY/cap', 'with cap 99999999', [['cap', '99999999']]),
    post('/settings/keys/KEY/cap', 'with a NUL cap', [['cap', '1\u0000']]),
    post('/settings/keys/key_unknown/cap', 'for an unknown key', [['cap', '1']]),
    post(`/settings/keys/${big(300)}/cap`, 'for a 300-character key id', [['cap', '1']]),
    post('/settings/keys/key_unknown/revoke', 'for an unknown key', []),
    post('/settings/keys/KEY/revoke', 'without the CSRF token', [], { csrf: false }),
    post('/workspace', 'without the CSRF token', [['workspace', 'x']], { csrf: false }),
    post('/logout', 'without the CSRF token', [], { csrf: false }),
    { name: 'GET /dashboard/setup with a malformed token', method: 'GET', url: '/dashboard/setup?token=%00%FF', dashboard: anon },
    { name: 'GET /dashboard/setup with two tokens', method: 'GET', url: `/dashboard/setup?token=${'A'.repeat(32)}&token=x`, dashboard: anon },
    { name: 'GET /dashboard/files with a bad page', method: 'GET', url: '/dashboard/files?page=%00&kind=__proto__', dashboard: { signedIn: false } },
  ];
  return rows;
}

const table = [...videoJsonInputs(), ...videoFormInputs(), ...familyInputs(), ...generationInputs(), ...editInputs(), ...responsesInputs(), ...taskReadInputs(), ...dashboardInputs()];

describe('malformed inputs to the newer routes', () => {
  let upstreamCalls = 0;
  let files = 0;
  let keyId = '';
  beforeAll(async () => {
    upstreamCalls = fake.requests.length;
    files = await fileRowCount(gw);
    keyId = (await gw.services.db.selectFrom('api_keys').select('id').where('workspace_id', '=', gw.workspace.id).executeTakeFirstOrThrow()).id;
  });

  it('holds at least 290 inputs', () => {
    console.info(`malformed-input table (newer routes): ${table.length} inputs`);
    expect(table.length).toBeGreaterThanOrEqual(290);
  });

  it.each(table.map((input) => [input.name, input] as const))('answers 4xx to %s', async (_name, input) => {
    const url = input.url.replace('KEY', keyId);
    if (input.dashboard) {
      const who = input.dashboard.signedIn === false ? anonymous : session;
      let payload = input.payload?.();
      if (input.dashboard.csrf !== false && payload !== undefined) payload = `_csrf=${encodeURIComponent(who.csrf)}${payload.length ? '&' : ''}${payload}`;
      const res = await gw.app.inject({ method: input.method, url, remoteAddress: '10.7.7.7', headers: { ...input.headers, cookie: who.cookie }, payload });
      expect(res.statusCode, res.body.slice(0, 300)).toBeGreaterThanOrEqual(input.method === 'GET' || input.dashboard.signedIn === false ? 300 : 400);
      expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(500);
      expect(Buffer.byteLength(res.body)).toBeLessThan(MAX_PAGE_BYTES);
      return;
    }
    const res = await gw.app.inject({ method: input.method, url, headers: { authorization: `Bearer ${gw.key}`, ...input.headers }, payload: input.payload?.() });
    expect(res.statusCode, res.body.slice(0, 300)).toBeGreaterThanOrEqual(400);
    expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(500);
    expect(Buffer.byteLength(res.body)).toBeLessThan(MAX_ERROR_BYTES);
    expect(JSON.parse(res.body).error).toMatchObject({ type: expect.any(String), code: expect.any(String), message: expect.any(String) });
  });

  it('answers a nameless multipart part with 400 unnamed_part on every multipart route (item 8)', async () => {
    for (const url of ['/v1/files', '/v1/images/edits', '/v1/videos', '/api/v1/runway/text_to_image']) {
      const body = rawForm(['form-data', 'x']);
      const res = await gw.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${gw.key}`, ...body.headers }, payload: body.payload!() });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error.code).toBe('unnamed_part');
    }
  });

  it('let no malformed input reach an upstream or store a file', async () => {
    expect(fake.requests.length).toBe(upstreamCalls);
    expect(await fileRowCount(gw)).toBe(files);
  });
});
