// A request's authentication added as it goes out: headers from the channel's credential, and for a signature, the body
// made into the exact bytes that are signed and sent (a form encoded once, with its boundary in content-type).
import type { Readable } from 'node:stream';
import { FormData, Response } from 'undici';
import type { AbortSource } from '../../net/call-abort.js';
import type { Authenticator } from './authenticator.js';

type RequestBody = string | Buffer | Readable | FormData;

/**
 * The request's headers with its authentication added, and the body to send (the signed bytes, for a signature).
 * `signal`: the request's deadline, which a token fetch does not outlast.
 */
export async function authenticated(auth: Authenticator | undefined, url: URL, method: string, headers: Record<string, string>, body: RequestBody | undefined, signal?: AbortSignal | AbortSource): Promise<{ headers: Record<string, string>; body: RequestBody | undefined }> {
  if (!auth) return { headers, body };
  if (!auth.signsBody) {
    const added = auth.headers({ method, url, headers, signal });
    return { headers: { ...headers, ...(added instanceof Promise ? await added : added) }, body };
  }
  const bytes = await bytesOf(body, headers);
  return { headers: await auth.headers({ method, url, headers: bytes.headers, body: bytes.body }), body: bytes.body };
}

/** A body as the exact bytes to send, and the headers that describe them. */
async function bytesOf(body: RequestBody | undefined, headers: Record<string, string>): Promise<{ body?: Buffer; headers: Record<string, string> }> {
  if (body === undefined) return { headers };
  if (typeof body === 'string') return { body: Buffer.from(body), headers };
  if (Buffer.isBuffer(body)) return { body, headers };
  if (body instanceof FormData) {
    const encoded = new Response(body);
    return { body: Buffer.from(await encoded.arrayBuffer()), headers: { ...headers, 'content-type': encoded.headers.get('content-type')! } };
  }
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return { body: Buffer.concat(chunks), headers };
}
