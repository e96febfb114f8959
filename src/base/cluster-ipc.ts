// The IPC channel node:cluster opens between the primary (src/cluster.ts) and each worker: a worker's questions to the
// primary, and the primary's commands to a worker (a reload), each one message out and one reply matched by id.
import cluster, { type Worker } from 'node:cluster';
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

/** The primary's command to one worker (askWorker), and the worker's answer. */
export interface WorkerCommand {
  gateway: 'command';
  id: number;
  kind: string;
}

export interface WorkerAnswer {
  gateway: 'answer';
  id: number;
  result?: unknown;
  error?: string;
}

const commandHandlers = new Map<string, () => Promise<unknown>>();

/** In a worker: answers the primary's `kind` commands (the first call installs the listener). */
export function answerPrimary(kind: string, handler: () => Promise<unknown>): void {
  if (!commandHandlers.size) {
    process.on('message', (message: WorkerCommand) => {
      if (message?.gateway !== 'command') return;
      const handler = commandHandlers.get(message.kind);
      Promise.resolve()
        .then(() => (handler ? handler() : Promise.reject(new Error(`no worker handler for ${message.kind}`))))
        .then(
          (result) => ({ gateway: 'answer', id: message.id, result }) satisfies WorkerAnswer,
          (err: Error) => ({ gateway: 'answer', id: message.id, error: err.message }) satisfies WorkerAnswer,
        )
        .then((answer) => {
          if (process.connected) process.send!(answer);
        });
    });
  }
  commandHandlers.set(kind, handler);
}

let nextCommandId = 0;

/** In the primary: sends `worker` a command and resolves with its answer; rejects when it errs, exits or takes longer than `timeoutMs`. */
export function askWorker<T>(worker: Worker, kind: string, timeoutMs: number): Promise<T> {
  const id = ++nextCommandId;
  return new Promise<T>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      worker.off('message', onAnswer);
      worker.off('exit', onExit);
    };
    const onAnswer = (message: WorkerAnswer) => {
      if (message?.gateway !== 'answer' || message.id !== id) return;
      done();
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.result as T);
    };
    const onExit = () => {
      done();
      reject(new Error(`worker ${worker.process.pid} exited`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`worker ${worker.process.pid} did not answer "${kind}" within ${timeoutMs} ms`));
    }, timeoutMs);
    worker.on('message', onAnswer);
    worker.once('exit', onExit);
    worker.send({ gateway: 'command', id, kind } satisfies WorkerCommand);
  });
}

/** How many worker processes took a reload: this one and the others the primary reached. */
export interface FleetReload {
  reloaded: number;
  total: number;
}

/**
 * After this process reloaded: the other workers of its cluster reload too (the primary asks each and counts them).
 * A process that is no cluster worker is the whole fleet.
 */
export async function reloadOtherWorkers(): Promise<FleetReload> {
  if (!cluster.isWorker) return { reloaded: 1, total: 1 };
  const others = await askPrimary<FleetReload>('reload-others');
  return { reloaded: others.reloaded + 1, total: others.total };
}
