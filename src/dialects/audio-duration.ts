// The duration of an uploaded audio file, read from its own bytes (music-metadata): what a per-minute price falls back to
// when the vendor's answer reports no seconds, and what its reservation is bounded by.
import { parseBuffer } from 'music-metadata';

/** Seconds of audio in `bytes`, or undefined when the format or its duration cannot be read. */
export async function audioSeconds(bytes: Buffer, filename: string, contentType: string): Promise<number | undefined> {
  try {
    const meta = await parseBuffer(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), { mimeType: contentType, path: filename, size: bytes.length }, { duration: true, skipCovers: true });
    const seconds = meta.format.duration;
    return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
  } catch {
    return undefined;
  }
}
