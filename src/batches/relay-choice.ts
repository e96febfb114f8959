// Whether a batch goes to its vendor's batch API: every line's first route on one channel whose protocol declares one
// (`batches:`) and which serves every operation it calls, and, under `tasks.batches.relay: priced`, every line's model
// priced for batches there (`price.batch`: the operator's word that the vendor batches it at that price).
import type { BatchApiSpec, ModelRoute } from '../config/types.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import { batchOperations } from '../config/cross-check-batches.js';
import type { BatchesOptions } from './options.js';

/** Whether the channel of `route` serves every step of its protocol's batch API (a channel's `operations` may leave them out). */
export function servesBatchApi(route: ModelRoute): route is ModelRoute & { protocol: { batches: BatchApiSpec } } {
  const spec = route.protocol.batches;
  if (!spec) return false;
  const served = route.channel.operations;
  // The steps of the batch API itself; whether the channel serves a line's own operation, its routing already said.
  return !served || batchOperations(spec).every(({ pointer, name }) => pointer.startsWith('/batches/operations/') || served.includes(name));
}

/** Follows a batch's lines as they are planned; `channel` is where the batch is relayed, or undefined. */
export class RelayChoice {
  private candidate: string | undefined;
  private ruledOut: boolean;

  constructor(
    /** The config as loaded (list prices and their `batch` prices), not the batch-priced view. */
    private readonly config: LoadedConfig,
    private readonly relay: BatchesOptions['relay'],
  ) {
    this.ruledOut = relay === 'never';
  }

  /** Takes the first route of one line. */
  add(route: ModelRoute): void {
    if (this.ruledOut) return;
    const channel = route.channel.id;
    if ((this.candidate !== undefined && this.candidate !== channel) || !servesBatchApi(route) || (this.relay === 'priced' && !this.batchPriced(route))) {
      this.ruledOut = true;
      return;
    }
    this.candidate = channel;
  }

  get channel(): string | undefined {
    return this.ruledOut ? undefined : this.candidate;
  }

  private batchPriced(route: ModelRoute): boolean {
    return !!this.config.models.get(route.model.id)?.some((r) => r.channel.id === route.channel.id && r.model.price.batch);
  }
}
