// Logprobs mode: one chat prompt per question, its first-token logprobs read as label probabilities; questions run concurrently.
import { setMaxListeners } from 'node:events';
import { UpstreamError, type GatewayError } from '../base/errors.js';
import { questionError, type ModeContext } from './context.js';
import { shapeAnswer } from './answers.js';
import { firstTokenLogprobs, labelDistribution } from './label-probabilities.js';
import { runLimited } from './limit.js';
import { stateText } from './questions.js';
import type { Answer, EvaluateSettings, ModeResult, Question } from './types.js';

/** The labels a question is answered with, in the order of its distribution. */
function labelsFor(question: Question, labels: EvaluateSettings['labels']): string[] {
  if (question.type === 'choice') return labels.choice.slice(0, question.options!.length);
  if (question.type === 'score') return labels.score.slice(0, question.criteria!.length);
  return [labels.yes, labels.no];
}

function promptScope(question: Question, labels: EvaluateSettings['labels'], labelSet: string[]) {
  return {
    question: {
      id: question.id,
      type: question.type,
      instructions: question.instructions,
      options: question.options?.map((o, i) => ({ label: labelSet[i], key: o.key, description: o.description })) ?? [],
      levels: question.criteria?.map((description, index) => ({ label: labelSet[index], index, description })) ?? [],
    },
    labels: { yes: labels.yes, no: labels.no },
  };
}

export async function runLogprobs(ctx: ModeContext, limits: { threshold: number; concurrency: number }): Promise<ModeResult> {
  const { config, route, settings, questions, signal } = ctx;
  const { templates } = config;
  const prompts = settings.prompts!;
  const model = route.model.upstream ?? route.model.id;
  // Rendered once: every question's prompt starts with the same bytes, which upstream prefix caches reuse.
  const stateMessage = { role: prompts.state.role, content: templates.get(prompts.state.content).render({ state: stateText(ctx.state) }) };

  // Every call in flight listens on the request's abort signal.
  setMaxListeners(questions.length + limits.concurrency + 10, signal);
  const answers = new Map<string, Answer>();
  const failures = new Map<string, GatewayError>();

  const ask = async (question: Question) => {
    const labelSet = labelsFor(question, settings.labels);
    const template = question.type === 'noul' ? prompts.boolean : prompts[question.type];
    try {
      const body = {
        model,
        messages: [stateMessage, { role: 'user', content: templates.get(template).render(promptScope(question, settings.labels, labelSet)) }],
        ...settings.parameters,
      };
      const answer = await ctx.exchange(settings.operation, body);
      const candidates = firstTokenLogprobs(answer);
      if (!candidates) {
        throw new UpstreamError(`channel "${route.channel.id}" returned no logprobs, so this model cannot be evaluated through logprobs`, 502, 'logprobs_unavailable');
      }
      const { probabilities } = labelDistribution(candidates, labelSet, limits.threshold, route.channel.id);
      answers.set(question.id, shapeAnswer(question, probabilities));
    } catch (err) {
      failures.set(question.id, questionError(question.id, err));
    }
  };

  await runLimited(questions, limits.concurrency, ask, () => failures.size > 0 || signal.aborted);
  // Report the first failing question in the client's order, whichever finished first.
  const failed = questions.find((q) => failures.has(q.id));
  return { answers, error: failed ? failures.get(failed.id) : undefined };
}
