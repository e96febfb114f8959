// Dashboard test helpers: users made through the store, and a cookie-keeping HTTP client that reads CSRF tokens from pages.
import { deflateSync } from 'node:zlib';
import { hashPassword } from '../../src/dashboard/passwords.js';
import type { Services } from '../../src/services.js';
import type { Role } from '../../src/store/schema.js';
import { createUser, setMembership, setPasswordHash } from '../../src/store/users.js';
import type { Workspace } from '../../src/store/workspaces.js';
import { FakeUpstream } from './fake-upstream.js';
import { installImages, type ImageScript } from './fake-images.js';
import { startGateway, type TestGateway } from './gateway.js';

export const PASSWORD = 'correct horse battery';

export async function addUser(services: Services, email: string, memberships: [Workspace, Role][], password = PASSWORD) {
  const user = await createUser(services.db, email);
  await setPasswordHash(services.db, user.id, await hashPassword(password));
  for (const [workspace, role] of memberships) await setMembership(services.db, user.id, workspace.id, role);
  return user;
}

export interface Page {
  status: number;
  html: string;
  headers: Headers;
  location: string | null;
}

/** A browser-like client: keeps cookies, never follows redirects, finds the CSRF token in the last page. */
export class DashboardClient {
  readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(readonly baseUrl: string) {}

  private async request(method: string, path: string, body?: URLSearchParams, headers: Record<string, string> = {}): Promise<Page> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: { ...(cookie ? { cookie } : {}), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
      body,
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /expires=Thu, 01 Jan 1970/i.test(a));
      if (!value || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const html = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    if (token) this.csrf = token;
    return { status: res.status, html, headers: res.headers, location: res.headers.get('location') };
  }

  get(path: string, headers?: Record<string, string>): Promise<Page> {
    return this.request('GET', path, undefined, headers);
  }

  /** Posts a form with the last page's CSRF token, unless the fields name their own `_csrf` (or `null` for none). */
  post(path: string, fields: Record<string, string | string[]> = {}, options: { csrf?: string | null; headers?: Record<string, string> } = {}): Promise<Page> {
    const body = new URLSearchParams();
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    if (csrf !== null) body.append('_csrf', csrf);
    for (const [k, v] of Object.entries(fields)) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
    return this.request('POST', path, body, options.headers);
  }

  async signIn(email: string, password = PASSWORD): Promise<Page> {
    await this.get('/dashboard/login');
    return this.post('/dashboard/login', { email, password });
  }
}

/** An image channel at a fake upstream, priced per image, so generations make archived files and ledger rows. */
export const imagesChannel = (baseUrl: string) => `id: images
protocol: openai-chat
baseUrl: ${baseUrl}
models:
  - id: fake-image
    upstream: upstream-image
    kind: image
    media: { maxImages: 4 }
    price:
      perImage: { default: 0.04 }
`;

/** A listening gateway whose image model archives into the files the dashboard shows. */
export async function startDashboardGateway(): Promise<{ gw: TestGateway; fake: FakeUpstream; script: ImageScript; close(): Promise<void> }> {
  const fake = await FakeUpstream.start();
  const script = installImages(fake);
  const port = new URL(fake.url).port;
  const gw = await startGateway({ channels: { images: imagesChannel(`${fake.url}/v1`) }, extraConfig: `network:\n  allowHosts: ["127.0.0.1:${port}"]\n`, listen: true });
  return { gw, fake, script, close: async () => (await gw.close(), await fake.close()) };
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (buf: Buffer) => {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type: string, data: Buffer) => {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
};

/** A size x size RGB PNG: a diagonal gradient between two colours, so screenshots show distinct pictures. */
export function gradientPng(from: [number, number, number], to: [number, number, number], size = 192): Buffer {
  const raw = Buffer.alloc(size * (size * 3 + 1));
  for (let y = 0; y < size; y++) {
    const row = y * (size * 3 + 1);
    for (let x = 0; x < size; x++) {
      const t = (x + y) / (2 * size - 2);
      for (let c = 0; c < 3; c++) raw[row + 1 + x * 3 + c] = Math.round(from[c] + (to[c] - from[c]) * t);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}
