// Logs in a terminal: pino's JSON lines as text a person reads.
import { describe, expect, it } from 'vitest';
import { formatLogLine } from '../src/http/log-format.js';

const at = new Date(2026, 10, 26, 9, 5, 7).getTime();

describe('terminal log lines', () => {
  it('shows the time, the level and the message, then the other fields as key=value', () => {
    const line = JSON.stringify({ level: 40, time: at, pid: 1, hostname: 'h', reqId: 'req_1', code: 'channel_unavailable', status: 503, msg: 'channel "openai" is disabled' });
    expect(formatLogLine(line)).toBe('09:05:07 WARN  channel "openai" is disabled  reqId=req_1 code=channel_unavailable status=503\n');
  });

  it('quotes values with spaces and shows nested fields as JSON', () => {
    const line = JSON.stringify({ level: 30, time: at, msg: 'request completed', req: { method: 'GET', url: '/healthz' }, note: 'two words' });
    expect(formatLogLine(line)).toBe('09:05:07 INFO  request completed  req={"method":"GET","url":"/healthz"} note="two words"\n');
  });

  it('puts an error\'s stack below its line, and colours the level only when asked', () => {
    const line = JSON.stringify({ level: 50, time: at, msg: 'request failed', err: { message: 'boom', stack: 'Error: boom\n    at x (a.ts:1:1)' } });
    expect(formatLogLine(line)).toBe('09:05:07 ERROR request failed\n    Error: boom\n        at x (a.ts:1:1)\n');
    expect(formatLogLine(line, true)).toContain('\x1b[31mERROR\x1b[0m');
  });

  it('passes a line that is not JSON through', () => {
    expect(formatLogLine('plain text')).toBe('plain text\n');
  });
});
