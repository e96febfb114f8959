import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import * as undici from 'undici';
import { Agent, Pool, errors, interceptors, isFormData, request, util, webClasses } from '../src/net/undici.js';

let server: Server | undefined;
afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

describe("undici's parts, each from its own file (src/net/undici.ts)", () => {
  it("are the very classes and functions the package's index exports", () => {
    expect(Agent).toBe(undici.Agent);
    expect(Pool).toBe(undici.Pool);
    expect(errors).toBe(undici.errors);
    expect(util.parseHeaders).toBe(undici.util.parseHeaders);
    expect(interceptors.retry).toBe(undici.interceptors.retry);
    expect(webClasses().FormData).toBe(undici.FormData);
    expect(webClasses().Response).toBe(undici.Response);
    expect(isFormData(new undici.FormData())).toBe(true);
    expect(isFormData({ append() {} })).toBe(false);
  });

  it('send a request on a given dispatcher and on the global one', async () => {
    server = createServer((req, res) => res.end(`${req.method} ${req.url}`));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/path?q=1`;
    const pool = new Pool(new URL(url).origin);
    const onPool = await request(url, { method: 'POST', body: 'x', dispatcher: pool });
    expect(await onPool.body.text()).toBe('POST /path?q=1');
    const onGlobal = await request(new URL(url), { method: 'GET' });
    expect(onGlobal.statusCode).toBe(200);
    expect(await onGlobal.body.text()).toBe('GET /path?q=1');
    await pool.close();
  });
});
