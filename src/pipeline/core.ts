// The transport-free core of a call: the runtime snapshot it runs on, one overall deadline and the signal that ends its
// upstream work. A client's request (the HTTP adapter) and the task runner's upstream calls (no client) both build on it.
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { AttemptRecord, Upstreams } from '../engine/upstream.js';
import { CallAbort, type AbortSource } from '../net/call-abort.js';

/** What the send and decode stages need of a call: the snapshot's config and pools, and one deadline with its signal. */
export interface UpstreamScope {
  readonly config: LoadedConfig;
  readonly upstreams: Upstreams;
  /** Aborts when the deadline passes (or the client hangs up, or the caller's own signal aborts). */
  readonly signal: AbortSignal;
  /** The same abort as undici takes it, without an AbortSignal (the upstream request's signal on the hot path). */
  readonly abortSource: AbortSource;
  /** True once the deadline passed. */
  readonly timedOut: boolean;
  /** Starts the overall deadline of the upstream work, once: later calls keep the first deadline. */
  startDeadline(ms: number): void;
  /** Keeps something until the call ends, then calls `release` (a route target's in-flight count). */
  holdUntilDone(release: () => void): void;
  /** Told of each attempt at a route's target (the request log lists them); absent where nothing is logged. */
  attempted?(record: AttemptRecord): void;
}

/** One object per call, its methods shared: the hot path allocates the call and its abort, no closures. */
export class CallCore implements UpstreamScope {
  clientGone = false;
  timedOut = false;
  protected readonly abort = new CallAbort();
  private timer: NodeJS.Timeout | undefined;
  private disposed = false;
  /** What the call keeps until it ends (bytes held against the in-flight budget, a creation slot); none on the hot path. */
  private held?: (() => void)[];

  constructor(
    readonly config: LoadedConfig,
    readonly upstreams: Upstreams,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get abortSource(): AbortSource {
    return this.abort;
  }

  startDeadline(ms: number): void {
    this.timer ??= setTimeout(deadlinePassed, ms, this);
  }

  /** Called by the deadline's timer. */
  expire(): void {
    this.timedOut = !this.clientGone && !this.abort.aborted;
    this.abort.abort();
  }

  /** Keeps something until the call ends, then calls `release` (at once when it has ended). */
  holdUntilDone(release: () => void): void {
    if (this.disposed) release();
    else (this.held ??= []).push(release);
  }

  /** Stops the deadline and lets go of what the call holds; once, whoever calls it first. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.timer);
    this.ended();
    const held = this.held;
    this.held = undefined;
    // A release that holds something more is run at once (the call is disposed): nothing joins this list meanwhile.
    if (held) for (const release of held) release();
  }

  /** What a kind of call lets go of when it ends (a snapshot hold, a client listener). */
  protected ended(): void {}
}

function deadlinePassed(call: CallCore): void {
  call.expire();
}

/** An upstream call with no client: the task runner's submit, poll and download, ended early by `parent` (shutdown, a task's deadline). */
class DetachedCall extends CallCore {
  constructor(
    config: LoadedConfig,
    upstreams: Upstreams,
    private readonly parent?: AbortSignal,
  ) {
    super(config, upstreams);
    if (parent?.aborted) this.abort.abort(parent.reason);
    else parent?.addEventListener('abort', this.onParent);
  }

  private readonly onParent = (): void => this.abort.abort(this.parent?.reason);

  protected override ended(): void {
    this.parent?.removeEventListener('abort', this.onParent);
  }
}

/** A call of the core with no client, on a snapshot the caller holds; the caller disposes it when its answer is read. */
export function detachedCall(snapshot: { config: LoadedConfig; upstreams: Upstreams }, parent?: AbortSignal): CallCore {
  return new DetachedCall(snapshot.config, snapshot.upstreams, parent);
}
