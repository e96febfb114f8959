// Native mode: the upstream evaluates every question in one call; types are aliased on the way out and mapped back, and every answer is checked and reshaped.
import { renderer } from '../engine/translate/render.js';
import { normalise, shapeAnswer } from './answers.js';
import { questionError, upstreamMalformed, type ModeContext } from './context.js';
import type { Answer, ModeResult, Question, QuestionType } from './types.js';

interface NativeAnswer {
  type?: unknown;
  noul?: unknown;
  probability?: unknown;
  probabilities?: unknown;
}

const isProbability = (v: unknown): v is number => typeof v === 'number' && v >= 0 && v <= 1;

/** The question as the upstream receives it: the client's fields, the type possibly aliased. */
function outgoing(question: Question, type: QuestionType) {
  return {
    type,
    instructions: question.instructions,
    ...(question.options ? { options: Object.fromEntries(question.options.map((o) => [o.key, o.description])) } : {}),
    ...(question.criteria ? { criteria: question.criteria } : {}),
  };
}

/** Weights for `keys` from an upstream probabilities map; a missing key counts as 0, an unknown one is an error. */
function weightsFrom(value: unknown, keys: string[]): number[] | string {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'no "probabilities" object';
  const map = value as Record<string, unknown>;
  const unknown = Object.keys(map).filter((k) => !keys.includes(k));
  if (unknown.length) return `unknown keys ${unknown.map((k) => JSON.stringify(k)).join(', ')} in "probabilities"`;
  const weights = keys.map((k) => map[k] ?? 0);
  if (!weights.every(isProbability)) return '"probabilities" holds a value outside [0, 1]';
  return weights as number[];
}

/** The distribution a native answer gives for `question`, or why it cannot be read. */
function distributionOf(question: Question, sentAs: QuestionType, answer: NativeAnswer | undefined): number[] | string {
  if (!answer || typeof answer !== 'object') return 'no answer for this question';
  if (answer.type !== sentAs) return `answer type ${JSON.stringify(answer.type)} where "${sentAs}" was asked`;
  if (sentAs === 'noul' || sentAs === 'boolean') {
    const p = sentAs === 'noul' ? answer.noul : answer.probability;
    return isProbability(p) ? [p, 1 - p] : `"${sentAs === 'noul' ? 'noul' : 'probability'}" is not a number in [0, 1]`;
  }
  const keys = sentAs === 'choice' ? question.options!.map((o) => o.key) : question.criteria!.map((_c, i) => String(i));
  const weights = weightsFrom(answer.probabilities, keys);
  if (typeof weights === 'string') return weights;
  return normalise(weights) ?? '"probabilities" hold no mass';
}

export async function runNative(ctx: ModeContext): Promise<ModeResult> {
  const { config, route, settings, questions } = ctx;
  const where = `${route.protocol.file} /evaluate`;
  const channel = route.channel.id;
  const aliases = settings.typeAliases ?? {};
  const sentAs = new Map(questions.map((q) => [q.id, aliases[q.type] ?? q.type]));
  const body = renderer(config, settings.request, `${where}/request`)({
    model: route.model.upstream ?? route.model.id,
    state: ctx.state,
    questions: Object.fromEntries(questions.map((q) => [q.id, outgoing(q, sentAs.get(q.id)!)])),
  });

  const upstream = await ctx.exchange(settings.operation, body);
  let mapped: { answers?: Record<string, NativeAnswer> | null };
  try {
    mapped = renderer(config, settings.response, `${where}/response`)({ body: upstream }) as typeof mapped;
  } catch {
    throw upstreamMalformed(channel, 'its body does not fit the protocol\'s response mapping');
  }

  const answers = new Map<string, Answer>();
  for (const question of questions) {
    const distribution = distributionOf(question, sentAs.get(question.id)!, mapped.answers?.[question.id] ?? undefined);
    if (typeof distribution === 'string') return { answers, error: questionError(question.id, upstreamMalformed(channel, distribution)) };
    answers.set(question.id, shapeAnswer(question, distribution));
  }
  return { answers };
}
