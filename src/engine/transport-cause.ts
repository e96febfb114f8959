// What the operator's log says of a connection that failed: the system's error code and the address it tried.

interface SocketError {
  code?: string;
  address?: string;
  port?: number;
  cause?: unknown;
  errors?: unknown[];
}

/** The system error under a failed connection (fetch's cause, or the first of several addresses tried): its code and address. */
export function transportCause(err: unknown): { address?: string; errno?: string } {
  let current = err as SocketError | undefined;
  for (let depth = 0; current && depth < 4; depth++) {
    const first = (current.errors?.[0] ?? current) as SocketError;
    if (typeof current.code === 'string' && /^E[A-Z]+$/.test(current.code)) {
      const address = first.address ?? current.address;
      const port = first.port ?? current.port;
      return { errno: current.code, ...(address ? { address: port ? `${address.includes(':') ? `[${address}]` : address}:${port}` : address } : {}) };
    }
    current = current.cause as SocketError | undefined;
  }
  return {};
}
