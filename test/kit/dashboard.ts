// Dashboard test helpers: users made through the store, and a cookie-keeping HTTP client that reads CSRF tokens from pages.
import { hashPassword } from '../../src/dashboard/passwords.js';
import type { Services } from '../../src/services.js';
import type { Role } from '../../src/store/schema.js';
import { createUser, setMembership, setPasswordHash } from '../../src/store/users.js';
import type { Workspace } from '../../src/store/workspaces.js';
import { FakeUpstream } from './fake-upstream.js';
import { installImages } from './fake-images.js';
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
export async function startDashboardGateway(): Promise<{ gw: TestGateway; fake: FakeUpstream; close(): Promise<void> }> {
  const fake = await FakeUpstream.start();
  installImages(fake);
  const port = new URL(fake.url).port;
  const gw = await startGateway({ channels: { images: imagesChannel(`${fake.url}/v1`) }, extraConfig: `network:\n  allowHosts: ["127.0.0.1:${port}"]\n`, listen: true });
  return { gw, fake, close: async () => (await gw.close(), await fake.close()) };
}
