// The body-rate guard (src/http/body-guard.ts) on requests made by hand: what it keeps, and when it cuts.
import type { IncomingMessage } from 'node:http';
import { setImmediate as turn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { SlowBodyGuard } from '../src/http/body-guard.js';

const timeouts = { headersMs: 30_000, requestMs: 3_600_000, keepAliveMs: 72_000, minBodyBytesPerSecond: 1000, bodyGraceMs: 100, checkIntervalMs: 10_000 };

/** A request whose headers came and whose body of `length` bytes has not yet. */
function request(length: number) {
  const socket = { bytesRead: 200, destroyed: false, destroy() { this.destroyed = true; } };
  return { complete: false, headers: { 'content-length': String(length) }, socket, url: '/v1/chat/completions' };
}

let guard: SlowBodyGuard | undefined;
afterEach(() => guard?.stop());

describe('body-rate guard', () => {
  it('keeps no request whose body came whole in the turn of its headers (a chat request), so none outlives its answer', async () => {
    const cut: unknown[] = [];
    guard = new SlowBodyGuard(timeouts, (req) => cut.push(req), () => 0);
    const requests = Array.from({ length: 50 }, () => request(300));
    for (const req of requests) guard.watch(req as unknown as IncomingMessage);
    for (const req of requests) req.complete = true;
    await turn();
    expect(guard.watching).toBe(0);
    guard.check();
    expect(cut).toEqual([]);
  });

  it('cuts a body still arriving below the floor after the grace period, and leaves one arriving fast enough', async () => {
    let clock = 0;
    const cut: unknown[] = [];
    guard = new SlowBodyGuard(timeouts, (req) => cut.push(req), () => clock);
    const [slow, fast] = [request(1_000_000), request(1_000_000)];
    guard.watch(slow as unknown as IncomingMessage);
    guard.watch(fast as unknown as IncomingMessage);
    await turn();
    expect(guard.watching).toBe(2);
    clock = 1000;
    slow.socket.bytesRead += 500;
    fast.socket.bytesRead += 5000;
    guard.check();
    expect(cut).toEqual([slow]);
    expect(slow.socket.destroyed).toBe(true);
    expect(guard.watching).toBe(1);
  });
});
