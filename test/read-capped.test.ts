// readCapped on Node streams (read by their events) and on other async iterables: whole, over the limit, a refused
// hold, a stream that breaks off, and one already read to its end.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readCapped } from '../src/net/read-capped.js';

const tooLarge = () => new Error('too large');
const chunks = (...parts: string[]) => Readable.from(parts.map((p) => Buffer.from(p)), { objectMode: false });

describe('readCapped', () => {
  it('reads a stream whole within the limit, counting what was used before', async () => {
    expect((await readCapped(chunks('ab', 'cd'), 6, tooLarge, { used: 2 })).toString()).toBe('abcd');
  });

  it('refuses one byte over the limit and destroys the stream', async () => {
    const body = chunks('abc', 'def');
    await expect(readCapped(body, 5, tooLarge)).rejects.toThrow('too large');
    expect(body.destroyed).toBe(true);
  });

  it('fails with what a refused hold throws, without an error escaping the stream', async () => {
    const body = chunks('abc', 'def');
    let held = 0;
    const hold = (n: number) => {
      if ((held += n) > 3) throw new Error('budget spent');
    };
    await expect(readCapped(body, 100, tooLarge, { hold })).rejects.toThrow('budget spent');
    expect(body.destroyed).toBe(true);
  });

  it('fails when the stream errors or closes before its end', async () => {
    const failing = new Readable({ read() {} });
    const read = readCapped(failing, 100, tooLarge);
    failing.push('ab');
    failing.destroy(new Error('socket hang up'));
    await expect(read).rejects.toThrow('socket hang up');
    const cut = new Readable({ read() {} });
    const cutRead = readCapped(cut, 100, tooLarge);
    cut.push('ab');
    cut.destroy();
    await expect(cutRead).rejects.toThrow('before it was complete');
  });

  it('reads a stream already ended, and any async iterable', async () => {
    const ended = chunks();
    ended.resume();
    await new Promise((resolve) => ended.once('end', resolve));
    expect((await readCapped(ended, 10, tooLarge)).length).toBe(0);
    async function* parts() {
      yield Buffer.from('x');
      yield new Uint8Array([0x79]);
    }
    expect((await readCapped(parts(), 10, tooLarge)).toString()).toBe('xy');
    await expect(readCapped(parts(), 1, tooLarge)).rejects.toThrow('too large');
  });
});
