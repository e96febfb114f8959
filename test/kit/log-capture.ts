// Captures the gateway's pino log lines in memory, so tests can read and await what it logged.
import { EventEmitter } from 'node:events';

export interface LogLine {
  level: number;
  msg?: string;
  reqId?: string;
  [field: string]: unknown;
}

export interface LogCapture {
  /** Every line so far, parsed. */
  lines: LogLine[];
  /** Raw text lengths, to check how long a line may get. */
  sizes: number[];
  /** pino options that write here. */
  logger: Record<string, unknown>;
  /** Resolves with the first line (already logged or still to come) that matches. */
  next(match: (line: LogLine) => boolean): Promise<LogLine>;
}

export function captureLogs(level = 'info'): LogCapture {
  const events = new EventEmitter();
  const lines: LogLine[] = [];
  const sizes: number[] = [];
  const stream = {
    write(text: string) {
      const line = JSON.parse(text) as LogLine;
      lines.push(line);
      sizes.push(text.length);
      events.emit('line', line);
    },
  };
  return {
    lines,
    sizes,
    logger: { level, stream },
    next(match) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => {
        const listener = (line: LogLine) => {
          if (!match(line)) return;
          events.off('line', listener);
          resolve(line);
        };
        events.on('line', listener);
      });
    },
  };
}
