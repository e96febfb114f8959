// A real gateway process for the suites that need one (npm start, workers): its log lines, a wait for a line, its exit.
import { spawn, type ChildProcess } from 'node:child_process';

export interface GatewayProcess {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first line (already logged or still to come) that matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

export function spawnGateway(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): GatewayProcess {
  const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env } });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  let buffer = '';
  const onData = (data: Buffer) => {
    buffer += data.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const waiter of [...waiters]) {
        const match = waiter.pattern.exec(line);
        if (match) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(match);
        }
      }
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      for (const line of lines) {
        const match = pattern.exec(line);
        if (match) return Promise.resolve(match);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no line matched ${pattern} in ${timeoutMs} ms:\n${lines.slice(-20).join('\n')}`)), timeoutMs);
        waiters.push({ pattern, resolve: (m) => (clearTimeout(timer), resolve(m)) });
        void exited.then((code) => reject(new Error(`the process exited (${code}) before a line matched ${pattern}:\n${lines.slice(-20).join('\n')}`)));
      });
    },
  };
}

/** Whether a process is still alive (signal 0 probes without signalling). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
