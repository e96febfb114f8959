// Fetches a URL a client or an upstream named (image_url, result URLs) without letting it reach anything private:
// https on 443 only, no credentials, every address checked when the connection is made, redirects re-checked, size capped.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from './undici.js';
import { GatewayError } from '../base/errors.js';
import { AllowList, refusedAddress, urlRefusal } from './address-policy.js';
import { SNIFF_BYTES, sniffContentType } from '../http/sniff.js';
import { clearWhenDone, Deadline } from './deadline.js';
import { readCapped } from './read-capped.js';

/** Resolves a host name to its addresses (tests inject one; nothing connects out from a test). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

export class RemoteFetchError extends GatewayError {
  constructor(
    url: string,
    reason: string,
    /** The status the remote answered, when it answered one other than 200. */
    readonly remoteStatus?: number,
    /** True when trying again later may succeed (unreachable, too slow, 408, 425, 429, 5xx). */
    readonly transient = false,
    /** Set when the guard itself refused the URL (scheme, port, credentials, a private address, a redirect to one): why, without the URL. */
    readonly refusal?: string,
  ) {
    super('remote_url_refused', 400, 'invalid_request_error', `cannot fetch ${JSON.stringify(url.slice(0, 200))}: ${reason}`);
  }
}

export interface RemoteFetchOptions {
  allowHosts?: readonly string[];
  resolver?: Resolver;
  maxRedirects?: number;
  connectTimeoutMs?: number;
  /** For the whole fetch, body included. */
  timeoutMs?: number;
}

export interface PostAnswer {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  /** The first bytes of the answer, as text. */
  answer: string;
}

export interface FetchedBody {
  url: string;
  /** The body as it arrives; `readCapped` bounds it. */
  body: Readable & Dispatcher.ResponseData['body'];
  /** What the server says; callers sniff the bytes rather than trust it. */
  declaredType?: string;
}

/** The undici Agent whose every connection resolves through `resolver` and refuses a private address at connect time. */
function guardedAgent(allow: AllowList, resolver: Resolver, connectTimeoutMs: number): Agent {
  type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;
  const lookup = (hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    resolver(hostname).then(
      (addresses) => {
        if (!addresses.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
        if (!allow.exempts(hostname)) {
          for (const { address } of addresses) {
            const refused = refusedAddress(address);
            if (refused) return callback(Object.assign(new Error(`${hostname} resolves to ${refused}`), { code: 'EREFUSED_ADDRESS' }), '');
          }
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (err: Error) => callback(err, ''),
    );
  };
  return new Agent({ connect: { lookup: lookup as never, timeout: connectTimeoutMs }, connections: 16 });
}

export class RemoteFetcher {
  private readonly allow: AllowList;
  private readonly agent: Agent;
  private readonly maxRedirects: number;
  private readonly timeoutMs: number;

  constructor(options: RemoteFetchOptions = {}) {
    this.allow = new AllowList(options.allowHosts);
    this.agent = guardedAgent(this.allow, options.resolver ?? systemResolver, options.connectTimeoutMs ?? 10_000);
    this.maxRedirects = options.maxRedirects ?? 3;
    this.timeoutMs = options.timeoutMs ?? 60_000;
  }

  /** Why `url` may not be fetched before any connection, or undefined. Literal IPs (any spelling the URL parser accepts) are checked here. */
  check(url: URL): string | undefined {
    return urlRefusal(url, this.allow);
  }

  /** GETs `url`, following at most `maxRedirects` redirects, each hop checked again. Throws RemoteFetchError (400) when refused. */
  async fetch(input: string, signal?: AbortSignal): Promise<FetchedBody> {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      throw new RemoteFetchError(input, 'it is not a URL');
    }
    // For the whole fetch, body included: cleared once the body ends, held by its timer until then.
    const deadline = new Deadline(this.timeoutMs, signal);
    try {
      const fetched = await this.follow(input, url, deadline);
      clearWhenDone(deadline, fetched.body);
      return fetched;
    } catch (err) {
      deadline.clear();
      throw err;
    }
  }

  private async follow(input: string, url: URL, deadline: Deadline): Promise<FetchedBody> {
    const abort = deadline.signal;
    for (let hop = 0; ; hop++) {
      const refused = this.check(url);
      if (refused) throw new RemoteFetchError(input, hop ? `a redirect leads to ${url.origin}: ${refused}` : refused, undefined, false, hop ? `a redirect leads to a refused address: ${refused}` : refused);
      let response: Dispatcher.ResponseData;
      try {
        response = await this.agent.request({ origin: url.origin, path: `${url.pathname}${url.search}`, method: 'GET', signal: abort, headers: { accept: 'image/*' } });
      } catch (err) {
        throw requestError(input, err, deadline);
      }
      if (response.statusCode >= 300 && response.statusCode < 400 && response.headers.location) {
        await response.body.dump();
        if (hop >= this.maxRedirects) throw new RemoteFetchError(input, `more than ${this.maxRedirects} redirects`);
        url = new URL(String(response.headers.location), url);
        continue;
      }
      if (response.statusCode !== 200) {
        await response.body.dump().catch(() => undefined);
        const status = response.statusCode;
        throw new RemoteFetchError(input, `it answered ${status}`, status, status >= 500 || status === 408 || status === 425 || status === 429);
      }
      return { url: url.href, body: response.body as FetchedBody['body'], declaredType: response.headers['content-type'] as string | undefined };
    }
  }

  /** Fetches `url` into memory, refusing a body over `maxBytes` while it streams (for small inputs; archives stream instead). */
  async fetchBytes(url: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
    const { body } = await this.fetch(url, signal);
    try {
      return await readCapped(body, maxBytes, () => new RemoteFetchError(url, `its body is over the ${maxBytes}-byte limit`));
    } catch (err) {
      if (err instanceof RemoteFetchError) throw err;
      const { name, code } = err as { name?: string; code?: string };
      const aborted = name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_ABORTED';
      throw new RemoteFetchError(url, aborted ? 'it took too long' : 'its body could not be read', undefined, true);
    }
  }

  /** An image a URL names, its type sniffed from the bytes: anything else is refused. */
  async fetchImage(url: string, maxBytes: number, signal?: AbortSignal): Promise<{ bytes: Buffer; contentType: string }> {
    const bytes = await this.fetchBytes(url, maxBytes, signal);
    const contentType = await sniffContentType(bytes.subarray(0, SNIFF_BYTES));
    if (!contentType?.startsWith('image/')) throw new RemoteFetchError(url, `its body is ${contentType ?? 'of an unknown type'}, not an image`);
    return { bytes, contentType };
  }

  /**
   * POSTs `body` to `url` once, checked like a fetch (the address at connect time too); a redirect is not followed but
   * answered as it is. At most `maxAnswerBytes` of the answer are read, the rest discarded; `timeoutMs` covers it all.
   */
  async post(input: string, request: { headers: Record<string, string>; body: string }, limits: { timeoutMs: number; maxAnswerBytes: number }): Promise<PostAnswer> {
    const url = URL.canParse(input) ? new URL(input) : undefined;
    const refused = url ? this.check(url) : 'it is not a URL';
    if (refused || !url) throw new RemoteFetchError(input, refused ?? 'it is not a URL');
    const deadline = new Deadline(limits.timeoutMs);
    try {
      const response = await this.agent.request({ origin: url.origin, path: `${url.pathname}${url.search}`, method: 'POST', signal: deadline.signal, headers: request.headers, body: request.body });
      const answer = await readPrefix(response.body, limits.maxAnswerBytes);
      return { status: response.statusCode, headers: response.headers, answer };
    } catch (err) {
      throw requestError(input, err, deadline);
    } finally {
      deadline.clear();
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** The first `max` bytes of a body as text; the rest is discarded unread (the connection is not kept when there is more). */
async function readPrefix(body: Dispatcher.ResponseData['body'], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (size >= max) break;
      chunks.push(chunk.subarray(0, max - size));
      size += Math.min(chunk.length, max - size);
    }
  } catch {
    // The status is the answer; a body cut short (or too slow) only shortens what is kept of it.
  }
  if (!body.destroyed) body.destroy();
  return Buffer.concat(chunks).toString('utf8');
}

/** Why a request failed before its answer: a refused address (not transient), too slow, or unreachable. */
function requestError(input: string, err: unknown, deadline: Deadline): RemoteFetchError {
  const code = (err as { code?: string; cause?: { code?: string } }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  const message = (err as Error).message ?? '';
  if (code === 'EREFUSED_ADDRESS' || message.includes('resolves to')) return new RemoteFetchError(input, message.slice(0, 200), undefined, false, message.slice(0, 200));
  if (deadline.expired) return new RemoteFetchError(input, 'it took too long', undefined, true);
  return new RemoteFetchError(input, `it could not be reached (${code ?? 'connection failed'})`, undefined, true);
}
