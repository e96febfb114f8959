// Hardening item 2: malformed multipart bodies and router-level failures answer 4xx in the typed envelope, never echoing the URL.
import { connect } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobKeys, fileRowCount, startFilesGateway, type FilesGateway } from './kit/files.js';
import { png } from './kit/media-samples.js';

let gw: FilesGateway;

beforeAll(async () => {
  gw = await startFilesGateway('local', { listen: true });
});
afterAll(async () => {
  await gw.close();
});

const upload = (contentType: string, payload: string | Buffer) =>
  gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${gw.key}`, 'content-type': contentType }, payload });

/** Sends raw bytes on a fresh connection and returns everything the gateway wrote back. */
async function rawExchange(request: string): Promise<string> {
  const port = new URL(gw.url).port;
  const socket = connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  socket.on('error', () => undefined);
  socket.write(request);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function typedBody(raw: string) {
  return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
}

describe('malformed multipart bodies are 400', () => {
  it('refuses a multipart body without a boundary with 400', async () => {
    const res = await upload('multipart/form-data', 'file=x');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_multipart' });
  });

  it('refuses a multipart body of garbage with 400', async () => {
    const res = await upload('multipart/form-data; boundary=zzz', '\u0000\u0001 not multipart at all --zz');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.type).toBe('invalid_request_error');
  });

  it('refuses a multipart body cut off inside the file with 400 and keeps nothing', async () => {
    const head = '--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nvision\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n';
    const res = await upload('multipart/form-data; boundary=b', Buffer.concat([Buffer.from(head), png(64 * 1024)]));
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_multipart');
    expect(await fileRowCount(gw)).toBe(0);
    expect(await blobKeys(gw)).toEqual([]);
  });

  it('refuses a multipart body cut off inside a part header with 400', async () => {
    const res = await upload('multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-da');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_multipart');
  });
});

describe('router-level failures answer in the typed envelope', () => {
  it('answers 414 to a 10 KB path without echoing it', async () => {
    const res = await gw.app.inject({ method: 'GET', url: `/v1/${'a'.repeat(10 * 1024)}` });
    expect(res.statusCode).toBe(414);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'uri_too_long' });
    expect(res.body.length).toBeLessThan(1024);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('answers 414 to an overlong path parameter in the typed envelope', async () => {
    const res = await gw.app.inject({ method: 'GET', url: `/v1/files/file_${'0'.repeat(300)}`, headers: { authorization: `Bearer ${gw.key}` } });
    expect(res.statusCode).toBe(414);
    expect(res.json().error.code).toBe('uri_too_long');
    expect(res.body).not.toContain('0'.repeat(100));
  });

  it('answers 400 to an unparsable percent-encoding in the typed envelope', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/v1/files/%E0%A4%A', headers: { authorization: `Bearer ${gw.key}` } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_url' });
    expect(res.body).not.toContain('%E0');
  });

  it('echoes at most a short prefix of an unknown 5 KB path', async () => {
    const res = await gw.app.inject({ method: 'GET', url: `/v1/${'b'.repeat(5 * 1024)}` });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('route_not_found');
    expect(res.body.length).toBeLessThan(1024);
  });

  it('sends a browser opening the address to the dashboard, and keeps the typed 404 for API clients (issue 49)', async () => {
    const browser = await gw.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    expect(browser.statusCode).toBe(302);
    expect(browser.headers.location).toBe('/dashboard');
    for (const accept of ['application/json', '*/*']) {
      const api = await gw.app.inject({ method: 'GET', url: '/', headers: { accept } });
      expect(api.statusCode).toBe(404);
      expect(api.json().error.code).toBe('route_not_found');
    }
    const elsewhere = await gw.app.inject({ method: 'GET', url: '/nothing-here', headers: { accept: 'text/html' } });
    expect(elsewhere.statusCode).toBe(404);
  });

  it('answers 431 to oversized headers in the typed envelope', async () => {
    const raw = await rawExchange(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20 * 1024)}\r\n\r\n`);
    expect(raw).toMatch(/^HTTP\/1\.1 431 /);
    expect(typedBody(raw).error).toMatchObject({ type: 'invalid_request_error', code: 'headers_too_large' });
  });

  it('answers 400 to a request line that is not HTTP in the typed envelope', async () => {
    const raw = await rawExchange('GET /healthz\u0000 HTTP/1.1\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(typedBody(raw).error.code).toBe('malformed_request');
  });
});
