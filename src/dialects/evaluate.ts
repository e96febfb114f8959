// The evaluate dialect: questions read before anything is reserved, one or many upstream calls (by mode), their usage summed, settled once.
import { renderCost, tokenCostMicros, type TokenUsage } from '../billing/cost.js';
import type { Charge } from '../billing/meter.js';
import { estimateEvaluateMicros } from '../billing/estimate.js';
import type { ModelRoute } from '../config/types.js';
import { resolveCallModel } from '../pipeline/resolve.js';
import { ChannelUnavailableError, ValidationError } from '../base/errors.js';
import type { ModeContext } from '../evaluate/context.js';
import { runLogprobs } from '../evaluate/logprobs-mode.js';
import { runNative } from '../evaluate/native-mode.js';
import { readQuestions } from '../evaluate/questions.js';
import type { EvaluateSettings, ModeResult, Question } from '../evaluate/types.js';
import type { Call } from '../pipeline/call.js';
import { readJsonObject } from '../pipeline/decode.js';
import type { Dialect } from '../pipeline/dialect.js';
import { send } from '../pipeline/send.js';
import { settleAfterFailure } from '../pipeline/settle.js';
import { usageReaderFor } from '../pipeline/usage.js';

interface EvaluatePlan {
  routes: ModelRoute[];
  settings: EvaluateSettings;
  questions: Question[];
}

/** Usage summed over every upstream call of one request; one answer without usable usage makes the whole request unmetered. */
class Spent {
  readonly usage: Required<TokenUsage> = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, audioInputTokens: 0, audioOutputTokens: 0, reasoningTokens: 0, seconds: 0, searches: 0, characters: 0 };
  answered = 0;
  unmetered = false;
  add(counts: TokenUsage) {
    for (const name of Object.keys(this.usage) as (keyof TokenUsage)[]) this.usage[name] += counts[name] ?? 0;
  }
}

/** The first enabled route whose protocol declares how to evaluate; a disabled model is a bad request here. */
function evaluationRoute(call: Call, modelId: unknown): ModelRoute {
  let routes: ModelRoute[];
  try {
    routes = resolveCallModel(call, modelId, 'evaluation');
  } catch (err) {
    if (err instanceof ChannelUnavailableError) throw new ValidationError(`model "${modelId}" is not an enabled evaluation model: ${err.message}`, 'model', 'model_not_enabled');
    throw err;
  }
  const route = routes.find((r) => r.protocol.evaluate);
  if (!route) throw new ChannelUnavailableError(`model "${modelId}" is served by channel "${routes[0].channel.id}", whose protocol "${routes[0].protocol.id}" declares no evaluate section`);
  return route;
}

/** map request, send, decode (each exchange of the mode), then settle on the usage summed over them. */
async function runEvaluation(call: Call, plan: EvaluatePlan, charge: Charge): Promise<unknown> {
  const [route] = plan.routes;
  const { settings, questions } = plan;
  const spent = new Spent();
  const ctx: ModeContext = {
    config: call.config,
    route,
    settings,
    questions,
    state: call.body.state,
    signal: call.signal,
    async exchange(operation, document) {
      const sent = await send(call, [route], () => ({ operation, document }));
      spent.answered++;
      const usage = usageReaderFor(call.config, sent, operation);
      try {
        const answer = await readJsonObject(sent);
        usage.fromAnswer(answer);
        const counts = usage.counts();
        if (counts) spent.add(counts);
        else spent.unmetered = true;
        return answer;
      } catch (err) {
        spent.unmetered = true;
        throw err;
      }
    },
  };
  const overrides = (route.model.evaluation ?? {}) as { labelMassThreshold?: number; concurrency?: number };
  let result: ModeResult;
  try {
    result =
      settings.mode === 'native'
        ? await runNative(ctx)
        : await runLogprobs(ctx, { threshold: overrides.labelMassThreshold ?? settings.labelMassThreshold, concurrency: overrides.concurrency ?? settings.concurrency });
  } catch (err) {
    await settleAfterFailure(charge, call.clientGone || spent.unmetered);
    throw err;
  }

  let costMicros = tokenCostMicros(route.model.price, spent.usage);
  // Tokens spent upstream are charged even when a question failed and the request fails with it.
  if (spent.unmetered || call.clientGone) costMicros = (await charge.settleReserved()).chargedMicros;
  else if (spent.answered) costMicros = (await charge.settle({ costMicros, ...spent.usage, route })).chargedMicros;
  else await charge.release();
  if (result.error) throw result.error;

  return {
    model: call.body.model,
    answers: Object.fromEntries(questions.map((q) => [q.id, result.answers.get(q.id)])),
    usage: { inputTokens: spent.usage.inputTokens, outputTokens: spent.usage.outputTokens },
    cost: renderCost({ micros: costMicros, currency: route.model.price.currency }),
  };
}

export function evaluateDialect(_operation: string): Dialect<EvaluatePlan> {
  return {
    resolve(call) {
      const route = evaluationRoute(call, call.body.model);
      return { routes: [route], settings: route.protocol.evaluate as unknown as EvaluateSettings, questions: [] };
    },
    inputs(call, plan) {
      const maxQuestions = call.config.gateway.evaluate.maxQuestions;
      plan.questions = readQuestions(call.body.questions, maxQuestions);
    },
    estimate: (call, plan) => estimateEvaluateMicros(plan.routes[0], call.body.state, call.bodyBytes, plan.questions.length),
    execute: runEvaluation,
  };
}
