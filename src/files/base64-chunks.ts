// Base64 results (images, task results) decoded for the file store a slice at a time.

/** Base64 decoded a slice at a time (a multiple of 4 characters), so a large result never sits in memory twice. */
export function* base64Chunks(text: string, charsPerChunk = 1 << 20): Generator<Uint8Array> {
  for (let i = 0; i < text.length; i += charsPerChunk) yield Buffer.from(text.slice(i, i + charsPerChunk), 'base64');
}
