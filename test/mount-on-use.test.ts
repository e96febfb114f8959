import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { mountOnUse } from '../src/http/mount-on-use.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** A gateway-like app with a part mounted at /part whose build fails `failures` times first; counts builds and answers. */
async function start(failures: number) {
  const counts = { builds: 0, answered: [] as string[] };
  app = Fastify({ genReqId: () => `req-${counts.answered.length + 1}` });
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    counts.answered.push(`${req.routeOptions.url} ${reply.statusCode}`);
    done();
  });
  mountOnUse(app, '/part', {}, async (part) => {
    counts.builds++;
    if (counts.builds <= failures) throw new Error('the part cannot be built');
    part.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))));
    await part.register(async (scope) => {
      scope.get('/', async () => ({ page: 'index' }));
      scope.post('/form', async (req) => ({ form: req.body, id: req.id }));
    }, { prefix: '/part' });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, counts };
}

describe('a part of the HTTP surface mounted on use (src/http/mount-on-use.ts)', () => {
  it('is built by its first request and kept; a body reaches its own parser unread, under the gateway request id', async () => {
    const { url, counts } = await start(0);
    expect(counts.builds).toBe(0);
    const index = await fetch(`${url}/part`);
    expect(await index.json()).toEqual({ page: 'index' });
    const form = await fetch(`${url}/part/form`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=two' });
    expect(form.status).toBe(200);
    const id = form.headers.get('x-request-id');
    expect(await form.json()).toEqual({ form: { a: '1', b: 'two' }, id });
    const missing = await fetch(`${url}/part/nothing-here`);
    expect(missing.status).toBe(404);
    expect(counts.builds).toBe(1);
    // The gateway's own hooks ran once for each request, on its mount routes.
    expect(counts.answered).toEqual(['/part 200', '/part/* 200', '/part/* 404']);
  });

  it('answers a failed build with a 500 and builds again on the next request', async () => {
    const { url, counts } = await start(1);
    expect((await fetch(`${url}/part`)).status).toBe(500);
    expect((await fetch(`${url}/part`)).status).toBe(200);
    expect(counts.builds).toBe(2);
  });

  it('never builds for a request outside its prefix', async () => {
    const { url, counts } = await start(0);
    expect((await fetch(`${url}/partly`)).status).toBe(404);
    expect(counts.builds).toBe(0);
  });
});
