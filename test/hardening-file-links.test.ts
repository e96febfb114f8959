// Hardening items 6, 7 and 8: one canonical token per signature, links that a Host header cannot redirect, stored content sandboxed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startFilesGateway, uploadForm, type FilesGateway } from './kit/files.js';
import { captureLogs } from './kit/log-capture.js';
import { startupWarnings } from '../src/config/load.js';
import { acceptedSamples, png } from './kit/media-samples.js';

const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;

async function upload(gw: FilesGateway, bytes: Buffer, filename: string, headers: Record<string, string> = {}) {
  const form = uploadForm(bytes, filename);
  const res = await gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${gw.key}`, ...form.headers, ...headers }, payload: form.payload });
  return res.json() as { id: string; url: string };
}

describe('signed tokens are canonical', () => {
  let gw: FilesGateway;
  let file: { id: string; url: string };
  const content = (token: string) => gw.app.inject({ method: 'GET', url: `/api/v1/files/${file.id}/content?token=${encodeURIComponent(token)}` });

  beforeAll(async () => {
    gw = await startFilesGateway('local');
    file = await upload(gw, png(), 'a.png');
  });
  afterAll(async () => {
    await gw.close();
  });

  it('serves the token exactly as signed', async () => {
    expect((await content(tokenOf(file.url))).statusCode).toBe(200);
  });

  it.each([
    ['with "=" appended', (t: string) => `${t}=`],
    ['with "!!" appended', (t: string) => `${t}!!`],
    ['in standard base64 characters', (t: string) => t.replace(/-/g, '+').replace(/_/g, '/')],
    ['with a final character that decodes to the same bytes', (t: string) => t.slice(0, -1) + String.fromCharCode(t.charCodeAt(t.length - 1) ^ 1)],
    ['with a leading zero on the expiry', (t: string) => t.replace(/\.(\d+)\./, '.0$1.')],
  ])('refuses the token %s with 403', async (_variant, alter) => {
    // A signature with no "-" or "_" reads the same in standard base64: sign at earlier moments until one has them.
    let token = tokenOf(file.url);
    for (let at = Date.now(); alter(token) === token && at > Date.now() - 600_000; at -= 1000) token = gw.services.files.signer.sign(file.id, at).token;
    const altered = alter(token);
    expect(altered).not.toBe(token);
    const res = await content(altered);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('invalid_token');
  });
});

describe('signed links never follow an untrusted Host header', () => {
  let gw: FilesGateway;
  const logs = captureLogs('warn');

  beforeAll(async () => {
    gw = await startFilesGateway('local', { listen: true, logger: logs.logger });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('links to the listen address, not to "Host: evil.example:666"', async () => {
    const form = uploadForm(png(), 'a.png');
    const res = await request(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, host: 'evil.example:666', ...form.headers }, body: form.payload });
    const file = (await res.body.json()) as { url: string };
    expect(res.statusCode).toBe(200);
    expect(file.url.startsWith(`${gw.url}/api/v1/files/`)).toBe(true);
    expect(file.url).not.toContain('evil.example');
  });

  it('warns once at start that server.publicUrl is not set (the startup summary, said once per process group)', () => {
    expect(startupWarnings(gw.services.config).filter((w) => w.includes('server.publicUrl is not set'))).toHaveLength(1);
  });
});

describe('signed links use an operator-trusted Host', () => {
  let gw: FilesGateway;

  beforeAll(async () => {
    gw = await startFilesGateway('local', { serverConfig: '  trustedHosts: [files.example.com, "gw.example.com:8443"]\n' });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('links to a Host listed in server.trustedHosts', async () => {
    const file = await upload(gw, png(), 'a.png', { host: 'gw.example.com:8443' });
    expect(file.url.startsWith('http://gw.example.com:8443/api/v1/files/')).toBe(true);
  });

  it('ignores a Host that is not listed', async () => {
    const file = await upload(gw, png(), 'a.png', { host: 'evil.example:666' });
    expect(file.url).not.toContain('evil.example');
  });
});

describe('stored content is served sandboxed', () => {
  let gw: FilesGateway;
  beforeAll(async () => {
    gw = await startFilesGateway('local');
  });
  afterAll(async () => {
    await gw.close();
  });

  const pdfWithScript = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog /OpenAction << /S /JavaScript /JS (app.alert(1)) >> >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n', 'ascii');

  it('serves a PDF with a JavaScript /OpenAction as a sandboxed attachment', async () => {
    const file = await upload(gw, pdfWithScript, 'report.pdf');
    const res = await gw.app.inject({ method: 'GET', url: new URL(file.url).pathname + new URL(file.url).search });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-security-policy']).toBe('sandbox');
    expect(res.headers['content-disposition']).toMatch(/^attachment;/);
  });

  it.each(acceptedSamples.filter((s) => /^(image|video|audio)\//.test(s.contentType)).map((s) => [s.contentType, s] as const))('serves %s inline, sandboxed', async (_type, sample) => {
    const file = await upload(gw, sample.bytes, sample.name);
    const res = await gw.app.inject({ method: 'GET', url: `/api/v1/files/${file.id}/content`, headers: { authorization: `Bearer ${gw.key}` } });
    expect(res.headers['content-security-policy']).toBe('sandbox');
    expect(res.headers['content-disposition']).toMatch(/^inline;/);
  });
});
