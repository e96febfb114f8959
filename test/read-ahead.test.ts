// readAhead: a stream's chunks read on while the first event waits for a count (a translated Messages stream's input
// estimate), so an upstream that breaks off meanwhile loses nothing it sent.
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readAhead } from '../src/pipeline/stream.js';
import { collectChunks } from './kit/streams.js';

/** A promise and its resolver. */
const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
};


describe('readAhead', () => {
  it('hands on what a stream sent before it broke off while the count was pending, then the failure', async () => {
    const body = new PassThrough();
    const count = gate();
    const reading = collectChunks(readAhead(body, count.opened));
    body.write('one');
    body.write('two');
    await new Promise((resolve) => setImmediate(resolve));
    body.destroy(new Error('socket reset'));
    await new Promise((resolve) => setImmediate(resolve));
    count.open();
    const seen = await reading;
    expect(seen.slice(0, -1).join('')).toBe('onetwo');
    expect(seen.at(-1)).toBe('error: socket reset');
  });

  it('yields nothing before the count is ready, then every chunk in order', async () => {
    const body = new PassThrough();
    const count = gate();
    const seen: string[] = [];
    const reading = (async () => {
      for await (const chunk of readAhead(body, count.opened)) seen.push(chunk.toString());
    })();
    body.write('a');
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
    count.open();
    body.end('b');
    await reading;
    expect(seen.join('')).toBe('ab');
  });

  it('goes on when the count fails, and a consumer that stops early ends the body', async () => {
    const body = Readable.from(['x', 'y', 'z'].map((s) => Buffer.from(s)));
    for await (const chunk of readAhead(body, Promise.reject(new Error('no count')))) {
      expect(chunk.toString()).toBe('x');
      break;
    }
    expect(body.destroyed).toBe(true);
  });
});
