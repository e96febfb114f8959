// A call of several exchanges on one route (evaluate's questions): each sent, decoded and metered here, their usage
// summed and settled once. A failure before the conversation ends charges the reservation when an answer went
// unmetered (or the client left the upstream working), the tokens reported when answers came with their usage, and
// releases it when nothing answered; a question that failed still has its exchanges' tokens charged before the call
// fails with it.
import { tokenCostMicros, type TokenUsage } from '../billing/cost.js';
import type { Charge } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import type { Call } from './call.js';
import { readJsonObject } from './decode.js';
import type { Exchange, SeveralExchanges } from './flow.js';
import { send } from './send.js';
import { settledTokens, settleReported } from './settle.js';
import { usageReaderFor, type UsageReader } from './usage.js';

/** Text a dialect wraps around the client's input in one exchange (evaluate's prompt template), in bytes: generous. */
const EXCHANGE_OVERHEAD_BYTES = 4096;

/** Usage summed over every exchange of one call; one answer without usable usage makes the whole call unmetered. */
class Tally {
  readonly usage: Required<TokenUsage> = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, audioInputTokens: 0, audioOutputTokens: 0, reasoningTokens: 0, units: {} };
  answered = 0;
  unmetered = false;
  /** Why an exchange's usage was impossible (not counts, or past the model's bound): the reservation is charged, logged. */
  impossible: string | undefined;

  add(counts: TokenUsage | undefined): void {
    if (!counts) {
      this.unmetered = true;
      return;
    }
    for (const name of Object.keys(this.usage) as (keyof TokenUsage)[]) if (name !== 'units') this.usage[name] += counts[name] ?? 0;
    for (const [name, n] of Object.entries(counts.units ?? {})) this.usage.units[name] = (this.usage.units[name] ?? 0) + n;
  }
}

/** map request, send, decode (every exchange the dialect asks for), then settle on the usage summed over them; the answer. */
export async function converse<Plan extends { routes: ModelRoute[] }>(call: Call, plan: Plan, charge: Charge, dialect: SeveralExchanges<Plan>): Promise<unknown> {
  // A conversation stays on its first route: its documents are mapped for that route's protocol.
  const route = plan.routes[0];
  const tally = new Tally();
  const exchange: Exchange = async (operation, document) => {
    const sent = await send(call, [route], () => ({ operation, document }));
    tally.answered++;
    const usage = usageReaderFor(call.config, sent, operation, 1, undefined, { bytes: call.bodyBytes + EXCHANGE_OVERHEAD_BYTES });
    try {
      const answer = await readJsonObject(sent);
      usage.fromAnswer(answer);
      tally.add(countsOf(usage, tally));
      return answer;
    } catch (err) {
      tally.unmetered = true;
      throw err;
    }
  };
  let conversation;
  try {
    conversation = await dialect.converse(call, plan, exchange);
  } catch (err) {
    // A mode that refuses an answer, an exchange after others that failed: what was spent upstream is charged first.
    await settleTally(charge, route, call, tally);
    throw err;
  }
  // Tokens spent upstream are charged even when a question failed and the call fails with it.
  const costMicros = await settleTally(charge, route, call, tally);
  if (conversation.failure) throw conversation.failure;
  return conversation.answer({ usage: tally.usage, costMicros });
}

/** An exchange's usage; usage that is malformed or impossible is noted on the tally (its reservation charged, logged) and thrown. */
function countsOf(usage: UsageReader, tally: Tally): TokenUsage | undefined {
  try {
    return usage.counts();
  } catch (err) {
    if ((err as { code?: string }).code === 'upstream_malformed') tally.impossible ??= (err as Error).message;
    throw err;
  }
}

/**
 * Settles a conversation's charge on what its exchanges said, whether it ended or failed: the reservation when an answer
 * went unmetered (or the client left the upstream working), the tokens reported when answers came with their usage,
 * nothing when none answered. The amount charged.
 */
async function settleTally(charge: Charge, route: ModelRoute, call: Call, tally: Tally): Promise<number> {
  if (tally.impossible) return (await settleReported(charge, route, call.log, { impossible: tally.impossible })).chargedMicros;
  if (tally.unmetered || call.clientGone) return (await charge.settleReserved()).chargedMicros;
  if (tally.answered) return (await settleReported(charge, route, call.log, { costMicros: tokenCostMicros(route.model.price, tally.usage), ...settledTokens(tally.usage), route })).chargedMicros;
  await charge.release();
  return 0;
}
