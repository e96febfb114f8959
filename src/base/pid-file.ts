// The gateway's pid file, which `npm run admin -- reload` reads to signal the running gateway.
import { readFileSync } from 'node:fs';

/** Where a running gateway writes its pid, so `npm run admin -- reload` can signal it. */
export const PID_FILE = 'gateway.pid';

/** When a process started, in clock ticks since boot (Linux /proc), or undefined where there is no /proc. */
export function processStartTime(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** What the gateway writes to its pid file: its pid, and when it started, so a stale file can never name another process. */
export function pidFileContents(pid = process.pid): string {
  return `${JSON.stringify({ pid, started: processStartTime('self') ?? null, gateway: 'relay-gateway' })}\n`;
}

/** The pid a pid file names, once it is checked to be that gateway still running; else why not. */
export function gatewayPid(text: string): { pid: number } | { refused: string } {
  let named: { pid?: unknown; started?: unknown; gateway?: unknown };
  try {
    named = JSON.parse(text) as typeof named;
  } catch {
    return { refused: 'it is not a pid file this gateway wrote (restart the gateway to write one)' };
  }
  const pid = named.pid;
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 1 || named.gateway !== 'relay-gateway') return { refused: 'it names no gateway process' };
  try {
    process.kill(pid, 0);
  } catch {
    return { refused: `process ${pid} is not running (the gateway stopped without removing its pid file)` };
  }
  const started = processStartTime(pid);
  if (typeof named.started === 'string' && started !== undefined && started !== named.started) {
    return { refused: `process ${pid} is not the gateway that wrote the file (it started at another time; the file is stale)` };
  }
  return { pid };
}
