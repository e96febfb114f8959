// AnswerChunks: an event stream's chunks taken straight from the upstream call's handler (no stream in between), with
// the stream's duties kept: backpressure, abort when the relay stops early, read-ahead while the first event waits for
// a count, and the idle bound of a stream that may fail over.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AnswerChunks, PAUSE_AT, type ChunkReadOptions } from '../src/engine/answer-chunks.js';
import { collectChunks } from './kit/streams.js';

/** A fake call: counts resumes, keeps the abort's reason. */
function source() {
  const seen = { resumes: 0, aborted: undefined as Error | undefined };
  return { seen, control: { resume: () => void seen.resumes++, abort: (reason: Error) => void (seen.aborted = reason) } };
}

const reader = (options?: ChunkReadOptions, queued: Buffer[] = []) => {
  const { seen, control } = source();
  const bytes = queued.reduce((n, c) => n + c.length, 0);
  return { seen, chunks: new AnswerChunks(control, queued, bytes, false, options) };
};


const turn = () => new Promise((resolve) => setImmediate(resolve));

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
};

describe('AnswerChunks', () => {
  afterEach(() => vi.useRealTimers());

  it('hands out what came before it was asked for, then each chunk as it comes, then the end', async () => {
    const { chunks } = reader({}, [Buffer.from('a')]);
    const reading = collectChunks(chunks);
    await turn();
    chunks.push(Buffer.from('b'));
    chunks.push(Buffer.from('c'));
    chunks.end();
    expect(await reading).toEqual(['a', 'b', 'c']);
  });

  it('hands out the chunks that came before a failure, together as one, then the failure', async () => {
    const { chunks } = reader();
    chunks.push(Buffer.from('one'));
    chunks.push(Buffer.from('two'));
    chunks.fail(new Error('socket reset'));
    expect(await collectChunks(chunks)).toEqual(['onetwo', 'error: socket reset']);
  });

  it('pauses the socket past 64 KiB unread and resumes it once the reader has taken them', async () => {
    const { chunks, seen } = reader();
    const half = Buffer.alloc(PAUSE_AT / 2);
    expect(chunks.push(half)).toBe(true);
    expect(chunks.push(half)).toBe(false);
    expect(seen.resumes).toBe(0);
    const read = await chunks.next();
    expect(read.value?.length).toBe(PAUSE_AT);
    expect(seen.resumes).toBe(1);
    expect(chunks.buffered).toBe(0);
  });

  it('aborts the call when the reader stops before the end, and not after it', async () => {
    const early = reader({}, [Buffer.from('x')]);
    for await (const chunk of early.chunks) {
      expect(chunk.toString()).toBe('x');
      break;
    }
    expect(early.seen.aborted?.name).toBe('AbortError');
    const whole = reader({}, [Buffer.from('x')]);
    whole.chunks.end();
    expect(await collectChunks(whole.chunks)).toEqual(['x']);
    await whole.chunks.return();
    expect(whole.seen.aborted).toBeUndefined();
  });

  it('keeps every chunk without pausing while the first event waits, and hands none out before it is ready', async () => {
    const count = gate();
    const { chunks, seen } = reader({ readAheadUntil: count.opened });
    const taken: string[] = [];
    const reading = (async () => {
      for await (const chunk of chunks) taken.push(String(chunk.length));
    })();
    expect(chunks.push(Buffer.alloc(PAUSE_AT))).toBe(true);
    expect(chunks.push(Buffer.alloc(PAUSE_AT))).toBe(true);
    await turn();
    expect(taken).toEqual([]);
    count.open();
    chunks.end();
    await reading;
    expect(taken).toEqual([String(2 * PAUSE_AT)]);
    expect(seen.aborted).toBeUndefined();
  });

  it('goes on when what the first event waits for fails', async () => {
    const { chunks } = reader({ readAheadUntil: Promise.reject(new Error('no count')) }, [Buffer.from('z')]);
    chunks.end();
    expect(await collectChunks(chunks)).toEqual(['z']);
  });

  it('fails a read that waits idleMs with nothing arriving, and aborts the call with that error', async () => {
    vi.useFakeTimers();
    const { chunks, seen } = reader({ idleMs: 1000, idleError: () => new Error('no byte for 1000 ms') });
    const reading = collectChunks(chunks);
    await vi.advanceTimersByTimeAsync(600);
    chunks.push(Buffer.from('late but in time'));
    await vi.advanceTimersByTimeAsync(999);
    expect(seen.aborted).toBeUndefined();
    await vi.advanceTimersByTimeAsync(2);
    expect(await reading).toEqual(['late but in time', 'error: no byte for 1000 ms']);
    expect(seen.aborted?.message).toBe('no byte for 1000 ms');
  });

  it('does not count the time the reader itself takes between reads as the upstream idle', async () => {
    vi.useFakeTimers();
    const { chunks, seen } = reader({ idleMs: 1000, idleError: () => new Error('idle') }, [Buffer.from('a')]);
    await chunks.next();
    await vi.advanceTimersByTimeAsync(5000);
    chunks.push(Buffer.from('b'));
    chunks.end();
    expect(await collectChunks(chunks)).toEqual(['b']);
    expect(seen.aborted).toBeUndefined();
  });
});
