// A call's abort without an AbortSignal per request: undici takes any object with `aborted`, `reason`, `on`/`once('abort')`
// and `removeListener` as a request's signal, and an AbortSignal (an EventTarget) costs several microseconds to make
// and to listen on. The real AbortSignal is made only when some code asks for one (a remote fetch, a backoff sleep).

/** What undici (and the gateway's own checks) need of an abort: the EventEmitter-shaped signal undici accepts. */
export interface AbortSource {
  readonly aborted: boolean;
  readonly reason: unknown;
  on(event: 'abort', listener: () => void): unknown;
  once(event: 'abort', listener: () => void): unknown;
  removeListener(event: 'abort', listener: () => void): unknown;
}

export class CallAbort implements AbortSource {
  aborted = false;
  reason: unknown = undefined;
  /** undici listens once per request it sends, so one slot covers the hot path; more go in `others`. */
  private listener: (() => void) | undefined;
  private others: (() => void)[] | undefined;
  private controller: AbortController | undefined;

  /** An AbortSignal that follows this abort, made on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** An abort happens once, so a listener is called at most once either way (undici checks `on` exists, then uses `once`). */
  on(event: 'abort', listener: () => void): this {
    return this.once(event, listener);
  }

  once(_event: 'abort', listener: () => void): this {
    if (this.listener === undefined) this.listener = listener;
    else (this.others ??= []).push(listener);
    return this;
  }

  removeListener(_event: 'abort', listener: () => void): this {
    if (this.listener === listener) this.listener = undefined;
    else if (this.others) {
      const i = this.others.indexOf(listener);
      if (i >= 0) this.others.splice(i, 1);
    }
    return this;
  }

  /** Aborts once, with `reason` (an AbortError when none is given, as AbortController does). */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    const listeners = [this.listener, ...(this.others ?? [])];
    this.listener = undefined;
    this.others = undefined;
    for (const listener of listeners) listener?.();
    this.controller?.abort(this.reason);
  }
}
