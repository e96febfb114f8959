// What a client says about caching its request: RFC 9111's request directives (no-store: neither read nor write;
// no-cache: ask the upstream again and store the fresh answer; max-age: no answer older than that; only-if-cached: a
// stored answer or a 504, never the upstream), and x-cache-ttl,
// a shorter life for the answer it stores (never longer than the route's).
import type { IncomingHttpHeaders } from 'node:http';

export interface ClientControl {
  noStore: boolean;
  noCache: boolean;
  /** Only a stored answer will do: anything else is a 504 (RFC 9111 section 5.2.1.7). */
  onlyIfCached?: boolean;
  /** The oldest answer, in seconds, the client accepts. */
  maxAgeSeconds?: number;
  /** The life, in seconds, of the answer this request stores. */
  ttlSeconds?: number;
}

const NONE: ClientControl = Object.freeze({ noStore: false, noCache: false });

/** Seconds as RFC 9111 writes them (1*DIGIT); anything else is no value. Past 2^31 reads as 2^31 (section 1.2.2). */
function deltaSeconds(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,20}$/.test(text)) return undefined;
  return Math.min(Number(text), 2 ** 31);
}

/** The request's directives; unknown ones are ignored, as RFC 9111 says. */
export function clientControl(headers: IncomingHttpHeaders): ClientControl {
  const header = headers['cache-control'];
  const ttl = headers['x-cache-ttl'];
  // Pragma: no-cache counts only without Cache-Control (RFC 9111 section 5.4).
  const pragma = headers.pragma;
  const pragmaNoCache = header === undefined && pragma !== undefined && /(^|,)\s*no-cache\s*(,|$)/i.test(String(pragma));
  if (header === undefined && ttl === undefined && !pragmaNoCache) return NONE;
  const control: ClientControl = { noStore: false, noCache: pragmaNoCache };
  for (const part of String(header ?? '').slice(0, 1024).split(',')) {
    const [name, value] = part.trim().toLowerCase().split('=', 2) as [string, string | undefined];
    if (name === 'no-store') control.noStore = true;
    else if (name === 'no-cache') control.noCache = true;
    else if (name === 'only-if-cached') control.onlyIfCached = true;
    else if (name === 'max-age') control.maxAgeSeconds = deltaSeconds(value?.replace(/^"(.*)"$/, '$1'));
  }
  if (typeof ttl === 'string') control.ttlSeconds = deltaSeconds(ttl.trim());
  return control;
}
