// The stream machine for Responses clients on a chat upstream: the generic machine's blocks become output items, and what
// the Responses event sequence needs beyond it is kept here: every event numbered (`sequence_number`), and each item's
// text or arguments accumulated, because its *.done events and the final response repeat them whole.
import type { GatewayError } from '../../base/errors.js';
import type { SseEvent } from '../sse.js';
import { StreamMachine, type Block, type EncodeStep } from './stream-machine.js';

/** An output item as the encode mappings see it (`op` of block_stop, each entry of `output`). */
interface OutputItem extends Block {
  /** The whole text of a text item, so far. */
  text: string;
  /** The whole arguments (JSON text) of a tool call, so far. */
  arguments: string;
  /** Its block was closed: an item cut short by a failure is `incomplete` in response.failed. */
  done: boolean;
  /** A thinking block's signature, or a redacted block's data (sealed into the reasoning item's encrypted_content). */
  signature?: string;
  data?: string;
}

export class ResponsesStreamMachine extends StreamMachine {
  private readonly items: OutputItem[] = [];
  private sequence = 0;

  /** A failure before the first event still opens the response, so clients that accumulate events have one to fail. */
  override fail(error: GatewayError): SseEvent[] {
    if (this.finished) return [];
    const out: SseEvent[] = [];
    if (!this.started) this.begin(undefined, out);
    return out.concat(super.fail(error));
  }

  protected override emit(step: EncodeStep, scope: Record<string, unknown>, out: SseEvent[]) {
    const op = scope.op as (Block & { text?: string; json?: string; signature?: string; data?: string }) | undefined;
    if (step === 'block_start' && op) this.items[op.index] = { ...op, text: '', arguments: '', done: false };
    else if (step === 'delta' && op) {
      const item = this.items[op.index];
      if (op.text) item.text += op.text;
      if (op.json) item.arguments += op.json;
      if (op.signature) item.signature = (item.signature ?? '') + op.signature;
      if (op.data) item.data = (item.data ?? '') + op.data;
    } else if (step === 'block_stop' && op) {
      const item = this.items[op.index];
      item.done = true;
      scope = { ...scope, op: item };
    } else if (step === 'finish' || step === 'error') {
      scope = { ...scope, output: this.items };
    }
    for (const e of this.render(step, scope)) {
      if (e.data && typeof e.data === 'object') (e.data as Record<string, unknown>).sequence_number = this.sequence++;
      out.push({ event: e.event, data: typeof e.data === 'string' ? e.data : JSON.stringify(e.data) });
    }
  }
}
