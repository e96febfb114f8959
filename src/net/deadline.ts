// A deadline that fires: an AbortController aborted by a timer, and by a parent signal if one is given. The timer
// holds the controller strongly until it fires or is cleared, so a garbage collection cannot lose it (unlike
// `AbortSignal.any([..., AbortSignal.timeout(ms)])`, whose timeout signal is collected once nothing else references it).

export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  /** True once the timer, not the parent, ended the work. */
  expired = false;

  constructor(
    ms: number,
    private readonly parent?: AbortSignal,
  ) {
    this.timer = setTimeout(expire, Math.max(1, ms), this);
    this.timer.unref();
    if (parent?.aborted) this.controller.abort(parent.reason);
    else parent?.addEventListener('abort', this.onParent);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Fires the deadline now (its timer's callback). */
  expire(): void {
    if (this.controller.signal.aborted) return;
    this.expired = true;
    this.controller.abort(new DOMException('the deadline passed', 'TimeoutError'));
    this.clear();
  }

  /** Ends the work now for another reason than time (the parent's own abort, a lost lease). */
  cancel(reason?: unknown): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
    this.clear();
  }

  /** The work ended: the timer and the parent's listener go. Safe to call more than once. */
  clear(): void {
    clearTimeout(this.timer);
    this.parent?.removeEventListener('abort', this.onParent);
  }

  private readonly onParent = (): void => {
    this.controller.abort(this.parent?.reason);
    this.clear();
  };
}

function expire(deadline: Deadline): void {
  deadline.expire();
}

/** Clears `deadline` once `body` ends, fails or is destroyed, so a streamed answer keeps its deadline to the last byte. */
export function clearWhenDone(deadline: Deadline, body: { once(event: string, listener: () => void): unknown; destroyed?: boolean }): void {
  if (body.destroyed) return deadline.clear();
  const done = () => deadline.clear();
  body.once('close', done);
  body.once('end', done);
  body.once('error', done);
}
