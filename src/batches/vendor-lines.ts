// A relayed batch's lines as its vendor takes them: each line run through the pipeline's stages up to the request it
// would send (resolve, inputs, guardrails, the mapping for the channel: the upstream model id, a translation), encoded
// as the operation declares, then shaped by the protocol's `batches.line` mapping.
import { GatewayError } from '../base/errors.js';
import type { EndpointConfig, ModelRoute } from '../config/types.js';
import type { Snapshot } from '../engine/runtime.js';
import type { Call } from '../pipeline/call.js';
import { guardCall } from '../pipeline/guard.js';
import { encode } from '../pipeline/send.js';
import { lineCallOf, type LineRunner } from './line-run.js';
import { lineFlow } from './plan.js';
import type { BatchLineRow, BatchRow } from './store.js';

/** One line mapped for the channel: the operation it calls and the body it would send. */
export interface MappedLine {
  operation: string;
  body: Record<string, unknown>;
  /**
   * The line's body as the input guardrails left it (redacted), when they changed it: kept as the line's body, so its
   * answer is read back on what was sent with the input checks not run again (src/pipeline/guard.ts, inputChecked).
   */
  checkedBody?: string;
}

/** What became of a line: mapped, refused (its own fault: the error file), or a reason the batch cannot be relayed. */
export type LineMapping = { mapped: MappedLine } | { refused: GatewayError } | { notRelayable: string };

/** The line as the pipeline would send it to `channel`. A fault of the gateway's own throws (the batch is tried again later). */
export async function mapLine(runner: LineRunner, row: BatchRow, line: BatchLineRow, snapshot: Snapshot, endpoint: EndpointConfig, channel: string): Promise<LineMapping> {
  const flow = lineFlow(endpoint);
  if (!('request' in flow)) return { notRelayable: `${endpoint.path} is not one request and its answer` };
  const call = lineCallOf(runner, row, line, snapshot, endpoint, snapshot.upstreams);
  try {
    const read = flow.read ? await flow.read(call) : undefined;
    const plan = flow.resolve(call, read);
    const index = plan.routes.findIndex((route: ModelRoute) => route.channel.id === channel);
    if (index < 0) return { notRelayable: `line ${line.line} no longer goes to channel "${channel}"` };
    const inputs = flow.inputs?.(call, plan);
    if (inputs) await inputs;
    // The line's one input check: its answer, read back later, is checked on the way out only.
    const guarded = call.config.guardrails && guardCall(call, plan);
    if (guarded) await guarded;
    // A guardrail that restores what it redacts keeps the values for the call's answer, in memory: not for a vendor batch
    // answered hours later, maybe in another process. The gateway runs such a batch itself.
    if ((call as Call).personalAnswer) return { notRelayable: `a guardrail of line ${line.line} restores what it redacts in the answer, which a vendor batch answers too late for` };
    const route: ModelRoute = plan.routes[index];
    const charge = await call.services.meter.begin({ auth: call.auth, route, requestId: call.requestId, estimateMicros: 0 });
    const outgoing = flow.request(call, plan, route, index, charge);
    const operation = route.protocol.operations[outgoing.operation];
    if (!operation || operation.encoding !== 'json' || outgoing.originPath !== undefined) return { notRelayable: `line ${line.line} is not sent as a JSON request` };
    const { body } = encode(operation, outgoing.document);
    const checked = JSON.stringify(call.body);
    return { mapped: { operation: outgoing.operation, body: JSON.parse(body as string) as Record<string, unknown>, ...(checked !== line.body && { checkedBody: checked }) } };
  } catch (err) {
    if (err instanceof GatewayError && err.expose && err.statusCode < 500) return { refused: err };
    throw err;
  } finally {
    call.dispose();
  }
}
