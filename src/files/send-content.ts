// A stored file's bytes as an answer: its type, length and Range, and the headers that keep client content inert.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BlobStore } from './blob-store.js';
import { parseRange } from './range.js';
import type { FileRow } from './repository.js';

/** Images, video and audio; anything else (a PDF with its own scripts, say) is downloaded, not displayed. */
function isPassiveMedia(contentType: string): boolean {
  return /^(?:image|video|audio)\//.test(contentType);
}

/** Streams `row` from the blob store (206 for a Range); HEAD gets the headers alone. */
export async function sendFileContent(services: { blobs: BlobStore }, req: FastifyRequest, reply: FastifyReply, row: FileRow): Promise<FastifyReply> {
  const range = parseRange(req.headers.range, row.bytes);
  reply.headers({
    'content-type': row.content_type,
    'x-content-type-options': 'nosniff',
    'cache-control': 'private',
    'accept-ranges': 'bytes',
    // Stored files are client content: never run as a page (sandbox), and only media the browser plays passively shown inline.
    'content-security-policy': 'sandbox',
    'content-disposition': `${isPassiveMedia(row.content_type) ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(row.filename)}`,
    'content-length': String(range ? range.end - range.start + 1 : row.bytes),
  });
  if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${row.bytes}`);
  if (req.method === 'HEAD') return reply.send();
  return reply.send(await services.blobs.get(row.blob_key, range));
}
