// A request's authentication added as it goes out: headers from the channel's credential, and for a signature, the body
// made into the exact bytes that are signed and sent (a form encoded once, with its boundary in content-type).
import type { Readable } from 'node:stream';
import type { FormData } from 'undici';
import { isFormData, webClasses } from '../../net/undici.js';
import type { AbortSource } from '../../net/call-abort.js';
import type { Authenticator, OutgoingRequest } from './authenticator.js';

type RequestBody = string | Buffer | Readable | FormData;

type Outgoing = { headers: Record<string, string>; body: RequestBody | undefined };

/**
 * The request's headers with its authentication added, and the body to send (the signed bytes, for a signature).
 * `signal`: the request's deadline, which a token fetch does not outlast. `url` may be a function that makes it: only an
 * authenticator that reads it (a signature over the URL) pays for parsing it. Answers at once (no promise, no turn of
 * the event loop) when nothing needs waiting for: no credential, or headers that are at hand.
 */
export function authenticated(auth: Authenticator | undefined, url: URL | (() => URL), method: string, headers: Record<string, string>, body: RequestBody | undefined, signal?: AbortSignal | AbortSource): Outgoing | Promise<Outgoing> {
  if (!auth) return { headers, body };
  if (!auth.signsBody) {
    const added = auth.headers(new HeaderRequest(method, url, headers, signal));
    return added instanceof Promise ? added.then((more) => ({ headers: { ...headers, ...more }, body })) : { headers: { ...headers, ...added }, body };
  }
  return signed(auth, typeof url === 'function' ? url() : url, method, headers, body);
}

async function signed(auth: Authenticator, url: URL, method: string, headers: Record<string, string>, body: RequestBody | undefined): Promise<Outgoing> {
  const bytes = await bytesOf(body, headers);
  return { headers: await auth.headers({ method, url, headers: bytes.headers, body: bytes.body }), body: bytes.body };
}

/** What a header authenticator is given: the URL made when first read. */
class HeaderRequest implements OutgoingRequest {
  private made: URL | undefined;

  constructor(
    readonly method: string,
    private readonly at: URL | (() => URL),
    readonly headers: Record<string, string>,
    readonly signal: AbortSignal | AbortSource | undefined,
  ) {}

  get url(): URL {
    return (this.made ??= typeof this.at === 'function' ? this.at() : this.at);
  }
}

/** A body as the exact bytes to send, and the headers that describe them. */
async function bytesOf(body: RequestBody | undefined, headers: Record<string, string>): Promise<{ body?: Buffer; headers: Record<string, string> }> {
  if (body === undefined) return { headers };
  if (typeof body === 'string') return { body: Buffer.from(body), headers };
  if (Buffer.isBuffer(body)) return { body, headers };
  if (isFormData(body)) {
    const encoded = new (webClasses().Response)(body);
    return { body: Buffer.from(await encoded.arrayBuffer()), headers: { ...headers, 'content-type': encoded.headers.get('content-type')! } };
  }
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return { body: Buffer.concat(chunks), headers };
}
