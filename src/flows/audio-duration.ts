// The duration of an uploaded audio file, read from its own bytes (music-metadata): what a per-minute price falls back to
// when the vendor's answer reports no seconds, what its reservation is, and what bounds the seconds an upstream may report.
// A header can lie: uncompressed audio (PCM: WAV, AIFF) is measured by the bytes it carries, not by the length it declares.

/** Bytes of a canonical WAV header before its samples. */
const PCM_HEADER_BYTES = 44;
/** Bytes past the declared samples still taken for metadata chunks (LIST, id3) rather than audio the header hides. */
const PCM_METADATA_ALLOWANCE = 64 * 1024;

/** Seconds of audio in `bytes`, or undefined when the format or its duration cannot be read. */
export async function audioSeconds(bytes: Buffer, filename: string, contentType: string): Promise<number | undefined> {
  try {
    // Loaded on the first audio upload: a gateway that prices no audio never holds its parsers (some 14 MiB resident).
    const { parseBuffer } = await import('music-metadata');
    const { format } = await parseBuffer(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), { mimeType: contentType, path: filename, size: bytes.length }, { duration: true, skipCovers: true });
    const declared = format.duration;
    if (typeof declared !== 'number' || !Number.isFinite(declared) || declared < 0) return undefined;
    return Math.max(declared, pcmSeconds(format, bytes.length, declared) ?? 0);
  } catch {
    return undefined;
  }
}

/**
 * Seconds the samples of an uncompressed file hold, counted from its size: a header that under-states its length does not
 * make its upload cheaper. Undefined for compressed formats (music-metadata reads those frame by frame) and for a file
 * whose bytes past the declared samples are few enough to be metadata.
 */
function pcmSeconds(format: { codec?: string; sampleRate?: number; numberOfChannels?: number; bitsPerSample?: number }, size: number, declared: number): number | undefined {
  const { sampleRate, numberOfChannels, bitsPerSample } = format;
  if (!format.codec?.startsWith('PCM') || !sampleRate || !numberOfChannels || !bitsPerSample) return undefined;
  const bytesPerSecond = (sampleRate * numberOfChannels * bitsPerSample) / 8;
  const samples = size - PCM_HEADER_BYTES;
  return samples - declared * bytesPerSecond > PCM_METADATA_ALLOWANCE ? samples / bytesPerSecond : undefined;
}
