// A process-wide budget for request bytes held in memory at once (reference images on their way upstream): a request
// that would pass it is refused with 503 and retry-after rather than making the process grow without bound.
import { GatewayError } from '../base/errors.js';

export class BytesBudgetError extends GatewayError {
  constructor() {
    super('server_busy', 503, 'server_error', 'the gateway holds as many request bytes as it may right now; try again shortly', { headers: { 'retry-after': '1' } });
  }
}

export class BytesInFlight {
  private used = 0;

  constructor(readonly limit: number) {}

  get held(): number {
    return this.used;
  }

  /** Holds `bytes` until the returned release is called (once; later calls do nothing). Throws BytesBudgetError when they do not fit. */
  hold(bytes: number): () => void {
    if (bytes <= 0) return () => undefined;
    if (this.used + bytes > this.limit) throw new BytesBudgetError();
    this.used += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
    };
  }
}

/** One budget per limit value (a reload that changes the limit starts a new one; a process normally has one). */
const budgets = new Map<number, BytesInFlight>();
export function bytesInFlight(limit: number): BytesInFlight {
  let budget = budgets.get(limit);
  if (!budget) budgets.set(limit, (budget = new BytesInFlight(limit)));
  return budget;
}
