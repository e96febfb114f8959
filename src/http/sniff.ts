// Decides a file's media type from its first bytes (file-type); the client's label is never trusted.

/** Bytes read before deciding; enough for every accepted format's signature. */
export const SNIFF_BYTES = 4100;

/** file-type's extension to the media type we store and serve. Anything absent is refused. */
const accepted: Record<string, string> = {
  png: 'image/png',
  apng: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  m4b: 'audio/mp4',
  wav: 'audio/wav',
  pdf: 'application/pdf',
};

export const ACCEPTED_FORMATS = 'PNG, JPEG, WebP, GIF, MP4, WebM, MP3, MP4 audio, WAV, PDF, JSON lines (purpose batch)';

/** JSON lines: text whose first character past white space opens an object (a batch's input and results). */
export const JSONL_TYPE = 'application/jsonl';

/** The accepted media type of these leading bytes, or undefined when they are not one of the accepted formats. */
export async function sniffContentType(head: Uint8Array): Promise<string | undefined> {
  // file-type and its readers (~30 modules) load with the first file sniffed, not on every start (issue 52's idle RSS).
  const { fileTypeFromBuffer } = await import('file-type');
  const found = await fileTypeFromBuffer(head);
  if (found) return accepted[found.ext];
  return looksLikeJsonLines(head) ? JSONL_TYPE : undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** An object first, and UTF-8 throughout (a character cut by the end of the head aside). */
function looksLikeJsonLines(head: Uint8Array): boolean {
  const text = Buffer.from(head).toString('latin1').trimStart();
  if (!text.startsWith('{')) return false;
  for (let cut = 0; cut < 4 && cut < head.length; cut++) {
    try {
      utf8.decode(head.subarray(0, head.length - cut));
      return true;
    } catch {
      // A multi-byte character cut at the end: try without its bytes.
    }
  }
  return false;
}
