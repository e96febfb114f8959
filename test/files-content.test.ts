// Serving file bytes: signed tokens (valid, tampered, expired, other file, truncated, rotated keys), API keys, Range and HEAD, expiry.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { signContentUrl, storeFile } from '../src/files/index.js';
import { UrlSigner } from '../src/files/signing.js';
import { createServices } from '../src/services.js';
import { blobDrivers, startFilesGateway, uploadForm, type FilesGateway } from './kit/files.js';
import { png } from './kit/media-samples.js';

const HOUR = 3600_000;
const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;

describe.each(blobDrivers)('file content on %s blobs', (driver) => {
  let gw: FilesGateway;
  const bytes = png(10_000);
  let file: { id: string; url: string };
  let other: { id: string; url: string };
  const get = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => gw.app.inject({ method, url, headers });
  const withToken = (id: string, token: string) => `/api/v1/files/${id}/content?token=${encodeURIComponent(token)}`;
  const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;

  beforeAll(async () => {
    gw = await startFilesGateway(driver);
    const up = async (b: Buffer) => {
      const form = uploadForm(b, 'picture.png');
      return (await gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload })).json();
    };
    file = await up(bytes);
    other = await up(png());
  });
  afterAll(async () => {
    await gw.close();
  });

  it('serves the bytes to a signed token alone, with the sniffed type, nosniff and private caching', async () => {
    const res = await get(pathOf(file.url));
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(bytes)).toBe(true);
    expect(res.headers).toMatchObject({ 'content-type': 'image/png', 'x-content-type-options': 'nosniff', 'cache-control': 'private', 'accept-ranges': 'bytes', 'content-length': String(bytes.length) });
  });

  it('serves on the /v1 path form too', async () => {
    expect((await get(withToken(file.id, tokenOf(file.url)).replace('/api/v1/', '/v1/'))).statusCode).toBe(200);
  });

  it('serves to an API key of the owning workspace without a token', async () => {
    const res = await get(`/v1/files/${file.id}/content`, { authorization: `Bearer ${gw.key}` });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(bytes)).toBe(true);
  });

  it('asks for a credential when there is neither token nor key', async () => {
    const res = await get(`/api/v1/files/${file.id}/content`);
    expect(res.statusCode).toBe(401);
  });

  it('refuses a tampered token with 403', async () => {
    const token = tokenOf(file.url);
    const [kid, exp, sig] = token.split('.');
    const flipped = sig.slice(0, 10) + (sig[10] === 'A' ? 'B' : 'A') + sig.slice(11);
    for (const bad of [`${kid}.${exp}.${flipped}`, `${kid}.${Number(exp) + 3600}.${sig}`, `other.${exp}.${sig}`, `${kid}.${exp}.${sig}AAAA`]) {
      const res = await get(withToken(file.id, bad));
      expect(res.statusCode, bad).toBe(403);
      expect(res.json().error.code).toBe('invalid_token');
    }
  });

  it('refuses another file’s token with 403', async () => {
    const res = await get(withToken(file.id, tokenOf(other.url)));
    expect(res.statusCode).toBe(403);
  });

  it('refuses every truncation of a token, and garbage, with 403 and never 500', async () => {
    const token = tokenOf(file.url);
    const cuts = [1, 3, 5, 10, 12, 17, 20, 40, token.length - 1].map((n) => token.slice(0, n));
    for (const bad of [...cuts, '.', '..', '...', 'a.b.c', `x.${'9'.repeat(40)}.y`, '\u0000', 'é.1.é', 'x'.repeat(5000)]) {
      const res = await get(withToken(file.id, bad));
      expect(res.statusCode, JSON.stringify(bad)).toBe(403);
    }
  });

  it('refuses an expired token with 403 saying so', async () => {
    const { url } = signContentUrl(gw.services, file.id, 'http://localhost', Date.now() - 2 * HOUR);
    const res = await get(pathOf(url));
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('expired_token');
  });

  it('answers 404 to a valid token once the file is deleted', async () => {
    const doomed = await storeFile(gw.services, { workspaceId: gw.workspace.id, stream: [png()], filename: 'doomed.png', purpose: 'vision', source: 'upload' });
    const { url } = signContentUrl(gw.services, doomed.id, 'http://localhost');
    expect((await get(pathOf(url))).statusCode).toBe(200);
    await gw.app.inject({ method: 'DELETE', url: `/v1/files/${doomed.id}`, headers: { authorization: `Bearer ${gw.key}` } });
    expect((await get(pathOf(url))).statusCode).toBe(404);
  });

  it('answers 404 for an expired file everywhere, even with a valid token', async () => {
    const old = await storeFile(gw.services, { workspaceId: gw.workspace.id, stream: [png()], filename: 'old.png', purpose: 'vision', source: 'generated', now: Date.now() - 31 * 24 * HOUR });
    const headers = { authorization: `Bearer ${gw.key}` };
    expect((await get(pathOf(signContentUrl(gw.services, old.id, 'http://localhost').url))).statusCode).toBe(404);
    expect((await get(`/v1/files/${old.id}`, headers)).statusCode).toBe(404);
    expect((await get(`/v1/files/${old.id}/content`, headers)).statusCode).toBe(404);
    const list = await get('/v1/files?limit=100', headers);
    expect(list.json().data.map((f: { id: string }) => f.id)).not.toContain(old.id);
  });

  it('serves byte ranges with 206 and Content-Range', async () => {
    const url = pathOf(file.url);
    const cases: [string, number, number][] = [
      ['bytes=0-99', 0, 99],
      ['bytes=9000-', 9000, bytes.length - 1],
      ['bytes=-500', bytes.length - 500, bytes.length - 1],
      ['bytes=9990-20000', 9990, bytes.length - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await get(url, { range });
      expect(res.statusCode, range).toBe(206);
      expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${bytes.length}`);
      expect(res.headers['content-length']).toBe(String(end - start + 1));
      expect(res.rawPayload.equals(bytes.subarray(start, end + 1))).toBe(true);
    }
  });

  it('answers 416 to a range past the end, and the whole file to several ranges', async () => {
    const url = pathOf(file.url);
    const past = await get(url, { range: `bytes=${bytes.length}-` });
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${bytes.length}`);
    const several = await get(url, { range: 'bytes=0-1,5-6' });
    expect(several.statusCode).toBe(200);
    expect(several.rawPayload.length).toBe(bytes.length);
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await get(pathOf(file.url), {}, 'HEAD');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBe(String(bytes.length));
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.rawPayload.length).toBe(0);
    const ranged = await get(pathOf(file.url), { range: 'bytes=0-9' }, 'HEAD');
    expect(ranged.statusCode).toBe(206);
    expect(ranged.headers['content-length']).toBe('10');
  });
});

describe('signing key rotation', () => {
  const oldSecret = 'o'.repeat(40);
  const newSecret = 'n'.repeat(40);
  const start = (retiredAt: string) =>
    startFilesGateway('local', {
      extraConfig: `files:\n  signing:\n    graceSeconds: 3600\n    keys:\n      - { id: new, secret: ${newSecret} }\n      - { id: old, secret: ${oldSecret}, retiredAt: "${retiredAt}" }\n`,
    });
  const oldSigner = new UrlSigner([{ id: 'old', secret: Buffer.from(oldSecret) }], 3600, 0);

  it('signs with the first unretired key and still accepts a retired key within the grace window', async () => {
    const gw = await start(new Date(Date.now() - 10 * 60_000).toISOString());
    try {
      const f = await storeFile(gw.services, { workspaceId: gw.workspace.id, stream: [png()], filename: 'r.png', purpose: 'vision', source: 'upload' });
      const fresh = signContentUrl(gw.services, f.id, 'http://localhost').url;
      expect(new URL(fresh).searchParams.get('token')!.startsWith('new.')).toBe(true);
      expect((await gw.app.inject({ method: 'GET', url: pathOf(fresh) })).statusCode).toBe(200);
      const { token } = oldSigner.sign(f.id);
      expect((await gw.app.inject({ method: 'GET', url: `/api/v1/files/${f.id}/content?token=${token}` })).statusCode).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('refuses a retired key once its grace window has passed', async () => {
    const gw = await start(new Date(Date.now() - 2 * HOUR).toISOString());
    try {
      const f = await storeFile(gw.services, { workspaceId: gw.workspace.id, stream: [png()], filename: 'r.png', purpose: 'vision', source: 'upload' });
      const { token } = oldSigner.sign(f.id);
      expect((await gw.app.inject({ method: 'GET', url: `/api/v1/files/${f.id}/content?token=${token}` })).statusCode).toBe(403);
    } finally {
      await gw.close();
    }
  });

  it('keeps a generated secret across restarts when config lists no key', async () => {
    const gw = await startFilesGateway('local');
    try {
      const f = await storeFile(gw.services, { workspaceId: gw.workspace.id, stream: [png()], filename: 'k.png', purpose: 'vision', source: 'upload' });
      const url = signContentUrl(gw.services, f.id, 'http://localhost').url;
      const restarted = await createServices(gw.services.config);
      const app = await buildApp(restarted, { logger: false });
      try {
        expect((await app.inject({ method: 'GET', url: pathOf(url) })).statusCode).toBe(200);
      } finally {
        await app.close();
      }
    } finally {
      await gw.close();
    }
  });
});

describe('logs', () => {
  it('never contain a signed token', async () => {
    const gw = await startFilesGateway('local');
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const services = await createServices(gw.services.config);
    const app = await buildApp(services, { logger: { level: 'info', stream } });
    try {
      const f = await storeFile(services, { workspaceId: gw.workspace.id, stream: [png()], filename: 'l.png', purpose: 'vision', source: 'upload' });
      const url = pathOf(signContentUrl(services, f.id, 'http://localhost').url);
      const token = new URL(url, 'http://x').searchParams.get('token')!;
      expect((await app.inject({ method: 'GET', url })).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: `${url}x` })).statusCode).toBe(403);
      const log = lines.join('');
      expect(log).toContain('token=[REDACTED]');
      expect(log).not.toContain(token.split('.')[2].slice(0, 20));
    } finally {
      await app.close();
      await gw.close();
    }
  });
});
