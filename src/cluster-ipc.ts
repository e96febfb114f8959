// A cluster worker's questions to its primary (src/cluster.ts) over the IPC channel node:cluster opens: one message
// out, one reply matched by id.
import { AggregatorRegistry, type Registry } from 'prom-client';

export interface PrimaryRequest {
  gateway: 'request';
  id: number;
  kind: string;
  payload: unknown;
}

export interface PrimaryReply {
  gateway: 'reply';
  id: number;
  result?: unknown;
  error?: string;
}

const pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
let nextId = 0;
let listening = false;

function onReply(message: PrimaryReply): void {
  if (message?.gateway !== 'reply') return;
  const waiter = pending.get(message.id);
  if (!waiter) return;
  pending.delete(message.id);
  if (message.error !== undefined) waiter.reject(new Error(message.error));
  else waiter.resolve(message.result);
}

/** Asks the primary (`kind` names one of its handlers); rejects with its error. */
export function askPrimary<T>(kind: string, payload?: unknown): Promise<T> {
  if (!listening) {
    listening = true;
    process.on('message', onReply);
  }
  const id = ++nextId;
  return new Promise<T>((resolve, reject) => {
    pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
    process.send!({ gateway: 'request', id, kind, payload } satisfies PrimaryRequest, undefined, undefined, (err) => {
      if (!err) return;
      pending.delete(id);
      reject(err);
    });
  });
}

/** The metrics of `registry` are read by the primary when it adds up a scrape. */
export function shareMetrics(registry: Registry): void {
  // Constructing one installs prom-client's worker-side listener for the primary's requests.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}
