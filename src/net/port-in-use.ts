// A port another process holds, said in one line the operator can act on, instead of a stack trace (issue 49).
import { createServer } from 'node:net';

/** The line for a listen that failed because the address is taken, or undefined for any other failure. */
export function portInUseMessage(err: unknown, host: string, port: number, command = 'npm start'): string | undefined {
  if ((err as NodeJS.ErrnoException | undefined)?.code !== 'EADDRINUSE') return undefined;
  return `port ${port} on ${host} is already in use (another gateway, or npm run demo?): stop that one, or start this one on another port: PORT=${port + 1} ${command}`;
}

/** Resolves once a trial server could bind `host:port` (and let it go); rejects with the bind's error. Port 0 is always free. */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}
