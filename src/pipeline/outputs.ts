// The outputs stage: media an answer carries (a URL, or base64) are archived into the workspace file store before the
// answer is sent; each result keeps its upstream fields and gains svc_file_id, svc_url and archive_status.
import { Readable } from 'node:stream';
import { GatewayError } from '../errors.js';
import { publicBaseUrl, signContentUrl, storeFile } from '../files/index.js';
import type { Call } from './call.js';

/** How much of one generated image the archive takes (the upload limit). */
const describe = (err: unknown) => (err instanceof GatewayError ? err.message : 'the result could not be stored').slice(0, 300);

/** Base64 decoded a slice at a time, so a large result never sits in memory twice. */
function* base64Chunks(text: string, charsPerChunk = 1 << 20): Generator<Uint8Array> {
  for (let i = 0; i < text.length; i += charsPerChunk) yield Buffer.from(text.slice(i, i + charsPerChunk), 'base64');
}

export interface ArchivedResult {
  svc_file_id?: string;
  svc_url?: string;
  archive_status: 'archived' | 'failed';
  archive_error?: string;
}

/** Archives one generated image, from its URL (through the SSRF guard, streamed) or its base64; never throws. */
export async function archiveImage(call: Call, item: { url?: unknown; b64_json?: unknown }, filename: string): Promise<ArchivedResult> {
  const { services } = call;
  try {
    let stream: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
    if (typeof item.b64_json === 'string') stream = base64Chunks(item.b64_json);
    else if (typeof item.url === 'string') stream = (await services.remote.fetch(item.url, call.signal)).body as Readable;
    else return { archive_status: 'failed', archive_error: 'the result has neither url nor b64_json' };
    const row = await storeFile(services, { workspaceId: call.auth.workspaceId, stream, filename, purpose: 'image_generation', source: 'generated' });
    return { svc_file_id: row.id, svc_url: signContentUrl(services, row.id, publicBaseUrl(services, call.req)).url, archive_status: 'archived' };
  } catch (err) {
    call.req.log.warn({ err }, 'archiving a generated image failed');
    return { archive_status: 'failed', archive_error: describe(err) };
  }
}

/** Archives every result of an image answer in place, in order. */
export async function archiveImages(call: Call, data: unknown): Promise<void> {
  if (!Array.isArray(data)) return;
  for (const [index, item] of data.entries()) {
    if (!item || typeof item !== 'object') continue;
    Object.assign(item, await archiveImage(call, item as { url?: unknown; b64_json?: unknown }, `image-${call.req.id}-${index}.png`));
  }
}
