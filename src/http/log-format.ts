// Where the gateway's logs go: pino's JSON lines on stdout, or, when stdout is a terminal, the same lines as text a
// person reads (time, level, message, then the other fields as key=value). No pretty-printer package: the format is small.
import { destination, pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const COLOURS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '35' };
/** Fields every line carries that a terminal reader does not need. */
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err']);

function fieldText(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/** One pino JSON line as a line of text: `12:04:05 WARN  message key=value ...`, an error's stack indented below it. */
export function formatLogLine(line: string, colour = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const level = Number(entry.level);
  const time = typeof entry.time === 'number' ? new Date(entry.time).toTimeString().slice(0, 8) : '';
  const label = (LEVELS[level] ?? String(entry.level)).padEnd(5);
  const fields = Object.entries(entry)
    .filter(([key, value]) => !HIDDEN.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${fieldText(value)}`);
  const err = entry.err as { stack?: string; message?: string } | undefined;
  const stack = err ? `\n    ${(err.stack ?? err.message ?? '').split('\n').join('\n    ')}` : '';
  const shownLabel = colour ? `\x1b[${COLOURS[level] ?? '0'}m${label}\x1b[0m` : label;
  return `${time} ${shownLabel} ${entry.msg ?? ''}${fields.length ? `  ${fields.join(' ')}` : ''}${stack}\n`;
}

let shared: DestinationStream | undefined;

/**
 * The one stream every logger of the process writes to: formatted text when stdout is a terminal (coloured unless
 * NO_COLOR), else pino's JSON lines, written asynchronously as pino's default destination writes them. One stream, so
 * text printed beside the log (printPlain) keeps its place among the lines.
 */
export function logDestination(): DestinationStream {
  if (shared) return shared;
  if (process.stdout.isTTY) {
    const colour = !process.env.NO_COLOR;
    shared = { write: (line: string) => void process.stdout.write(formatLogLine(line, colour)) };
  } else {
    shared = destination({ dest: 1, minLength: 0 });
  }
  return shared;
}

/** Plain text on stdout, in order with the log lines around it (the first start's key and link). */
export function printPlain(text: string): void {
  logDestination().write(text);
}

/** A pino logger writing where the gateway's logs go (see logDestination). */
export function gatewayLogger(options: LoggerOptions): Logger {
  return pino(options, logDestination());
}
