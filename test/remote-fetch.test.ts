// The SSRF guard: one row per vector, refused with 400 and a reason; loopback test servers reached only through allowHosts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteFetcher, RemoteFetchError } from '../src/net/remote-fetch.js';
import { png } from './kit/media-samples.js';

let server: Server;
let port: number;
/** The injected resolver's answers; nothing here ever resolves to a public address, so nothing connects out. */
const dns = new Map<string, string[]>();
let lookups: string[] = [];
const resolver = async (hostname: string): Promise<LookupAddress[]> => {
  lookups.push(hostname);
  return (dns.get(hostname) ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const [path, query] = (req.url ?? '/').split('?');
    if (path === '/image.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(png());
    if (path === '/big.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(png(64 * 1024));
    if (path === '/text') return res.writeHead(200, { 'content-type': 'image/png' }).end('<html>not an image</html>');
    if (path === '/missing') return res.writeHead(404).end();
    if (path === '/redirect') return res.writeHead(302, { location: decodeURIComponent(query ?? '') }).end();
    if (path === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  dns.set('images.test', ['127.0.0.1']);
  dns.set('private.test', ['10.1.2.3']);
  dns.set('metadata.test', ['169.254.169.254']);
  dns.set('mixed.test', ['8.8.8.8', '192.168.1.1']);
  dns.set('mapped.test', ['::ffff:127.0.0.1']);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The fetcher as tests run it: the loopback server reachable by IP and by `images.test`, each on its own port. */
const fetcher = (allowHosts = [`127.0.0.1:${port}`, `images.test:${port}`]) => new RemoteFetcher({ allowHosts, resolver, maxRedirects: 3 });

async function refusal(url: string, f = fetcher()): Promise<string> {
  lookups = [];
  const err = await f.fetchImage(url, 32 * 1024).then(() => undefined, (e: unknown) => e);
  await f.close();
  expect(err).toBeInstanceOf(RemoteFetchError);
  expect((err as RemoteFetchError).statusCode).toBe(400);
  expect((err as RemoteFetchError).code).toBe('remote_url_refused');
  return (err as Error).message;
}

describe('remote fetch', () => {
  it('fetches an image from an allowed host, by address and by name, its type sniffed from the bytes', async () => {
    const f = fetcher();
    expect(await f.fetchImage(`http://127.0.0.1:${port}/image.png`, 32 * 1024)).toEqual({ bytes: png(), contentType: 'image/png' });
    expect((await f.fetchImage(`http://images.test:${port}/image.png`, 32 * 1024)).bytes).toEqual(png());
    await f.close();
  });

  it.each([
    ['plain http', 'http://example.com/a.png', /only https/],
    ['another port', 'https://example.com:8443/a.png', /default port/],
    ['credentials in the URL', 'https://user:pass@example.com/a.png', /credentials/],
    ['loopback', 'https://127.0.0.1/a.png', /loopback/],
    ['loopback IPv6', 'https://[::1]/a.png', /loopback/],
    ['private 10/8', 'https://10.0.0.1/a.png', /private/],
    ['private 172.16/12', 'https://172.16.5.4/a.png', /private/],
    ['private 192.168/16', 'https://192.168.0.1/a.png', /private/],
    ['link-local', 'https://169.254.10.10/a.png', /linkLocal/],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data/', /linkLocal/],
    ['metadata over IPv6', 'https://[fd00:ec2::254]/a.png', /uniqueLocal/],
    ['multicast', 'https://224.0.0.1/a.png', /multicast/],
    ['reserved', 'https://240.0.0.1/a.png', /reserved/],
    ['broadcast', 'https://255.255.255.255/a.png', /broadcast/],
    ['unspecified', 'https://0.0.0.0/a.png', /unspecified/],
    ['CGNAT', 'https://100.64.0.1/a.png', /carrierGradeNat/],
    ['IPv4-mapped IPv6', 'https://[::ffff:10.0.0.1]/a.png', /private/],
    ['IPv4-mapped loopback in hex', 'https://[::ffff:7f00:1]/a.png', /loopback/],
    ['NAT64', 'https://[64:ff9b::a00:1]/a.png', /rfc6052/],
    ['IPv6 unique local', 'https://[fc00::1]/a.png', /uniqueLocal/],
    ['decimal IPv4', 'https://2130706433/a.png', /loopback/],
    ['octal IPv4', 'https://0177.0.0.1/a.png', /loopback/],
    ['hex IPv4', 'https://0x7f.0.0.1/a.png', /loopback/],
    ['short IPv4', 'https://127.1/a.png', /loopback/],
  ])('refuses %s', async (_vector, url, reason) => {
    expect(await refusal(url, fetcher([]))).toMatch(reason);
  });

  it.each([
    ['a private address', 'private.test', /10\.1\.2\.3 is a private address/],
    ['the metadata address', 'metadata.test', /linkLocal/],
    ['one private address among others', 'mixed.test', /192\.168\.1\.1 is a private address/],
    ['an IPv4-mapped loopback address', 'mapped.test', /loopback/],
  ])('refuses a name resolving to %s, checked when connecting', async (_what, host, reason) => {
    expect(await refusal(`https://${host}/image.png`)).toMatch(reason);
    expect(lookups).toEqual([host]);
  });

  it('checks the address the connection uses, so a rebinding answer cannot slip through', async () => {
    // No answer is trusted ahead of time: the only lookup is the connection's own, and its private answer is refused.
    let calls = 0;
    const rebinding = new RemoteFetcher({ resolver: async () => (calls++ === 0 ? [{ address: '10.0.0.9', family: 4 }] : [{ address: '93.184.216.34', family: 4 }]) });
    const err = await rebinding.fetch('https://rebind.test/a.png').catch((e: unknown) => e);
    await rebinding.close();
    expect((err as Error).message).toMatch(/10\.0\.0\.9 is a private address/);
    expect(calls).toBe(1);
  });

  it('refuses a redirect to a private address', async () => {
    expect(await refusal(`http://127.0.0.1:${port}/redirect?${encodeURIComponent('https://169.254.169.254/latest/meta-data/')}`)).toMatch(/a redirect leads to .*169\.254\.169\.254.*linkLocal/);
  });

  it('refuses a redirect to plain http on a host that is not allowed', async () => {
    expect(await refusal(`http://127.0.0.1:${port}/redirect?${encodeURIComponent('http://example.com/a.png')}`)).toMatch(/a redirect leads to .*only https/);
  });

  it('refuses more than 3 redirects', async () => {
    expect(await refusal(`http://127.0.0.1:${port}/loop`)).toMatch(/more than 3 redirects/);
  });

  it('refuses a body over the limit while it streams', async () => {
    expect(await refusal(`http://127.0.0.1:${port}/big.png`)).toMatch(/over the 32768-byte limit/);
  });

  it('refuses a body that is not an image, whatever its content-type says', async () => {
    expect(await refusal(`http://127.0.0.1:${port}/text`)).toMatch(/not an image/);
  });

  it('refuses an answer that is not 200, and a name that does not resolve', async () => {
    expect(await refusal(`http://127.0.0.1:${port}/missing`)).toMatch(/answered 404/);
    expect(await refusal('https://nowhere.test/a.png')).toMatch(/could not be reached/);
  });
});
