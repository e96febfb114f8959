// The SSE framing's decoding (src/engine/sse.ts): the upstream's bytes become text as a TextDecoder would make it,
// whatever the chunk boundaries: characters split across chunks, a leading byte order mark, invalid bytes.
import { describe, expect, it } from 'vitest';
import { SseReader } from '../src/engine/sse.js';

/** Feeds `chunks` and ends the stream: every event's data, in order. */
function read(chunks: Buffer[]): string[] {
  const reader = new SseReader();
  return [...chunks.flatMap((chunk) => reader.feed(chunk)), ...reader.end()].map((event) => event.data);
}

/** `bytes` cut into one-byte chunks. */
const byteByByte = (bytes: Buffer) => [...bytes].map((b) => Buffer.from([b]));

describe('SSE reader', () => {
  it('reads a character whose bytes arrive in different chunks as that character', () => {
    const bytes = Buffer.from('data: {"content":"naïve 😀 日本"}\n\n');
    expect(read(byteByByte(bytes))).toEqual(['{"content":"naïve 😀 日本"}']);
  });

  it('leaves out a byte order mark that opens the stream, even cut across chunks, and keeps one later on', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: a\n\ndata: \ufeffb\n\n')]);
    expect(read(byteByByte(bytes))).toEqual(['a', '\ufeffb']);
    expect(read([bytes])).toEqual(['a', '\ufeffb']);
  });

  it('reads invalid UTF-8 as U+FFFD, as a TextDecoder does', () => {
    const bytes = Buffer.concat([Buffer.from('data: x'), Buffer.from([0xff, 0xc3]), Buffer.from('y\n\n')]);
    expect(read([bytes])).toEqual([new TextDecoder().decode(bytes).slice('data: '.length, -2)]);
  });

  it('reads a character cut short by the next chunk as U+FFFD, as a TextDecoder does', () => {
    const chunks = [Buffer.concat([Buffer.from('data: z'), Buffer.from([0xe6, 0x97])]), Buffer.from('\n\n')];
    const decoder = new TextDecoder();
    const expected = chunks.map((chunk) => decoder.decode(chunk, { stream: true })).join('') + decoder.decode();
    expect(read(chunks)).toEqual([expected.slice('data: '.length, -2)]);
  });
});
