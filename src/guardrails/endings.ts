// An answer a guardrail blocked, as each chat dialect ends one its content filter stopped: OpenAI chat's choices end with
// `finish_reason: content_filter`, no content and a refusal naming the guardrail, a Messages answer has no content and
// stops with `refusal`, a Responses answer is `incomplete` for `content_filter`. Each gains a top-level `guardrail`
// member (the blocking guardrail's id; clients ignore members they do not know, as they do `cost`). Any other answer
// keeps its shape with every text emptied.
import { walkTexts } from './text.js';

type Answer = Record<string, unknown>;

const ENDINGS: Record<string, (answer: Answer, refusal: string) => Answer> = {
  'openai-chat': (answer, refusal) => ({
    ...answer,
    choices: ((answer.choices as Answer[] | undefined) ?? []).map((choice) => ({ ...choice, message: { role: 'assistant', content: null, refusal }, finish_reason: 'content_filter' })),
  }),
  'anthropic-messages': (answer) => ({ ...answer, content: [], stop_reason: 'refusal', stop_sequence: null }),
  'openai-responses': (answer) => {
    const ended: Answer = { ...answer, status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [] };
    if ('output_text' in ended) ended.output_text = '';
    return ended;
  },
};

export function filteredAnswer(answer: unknown, dialect: string, guardrail: string): unknown {
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return answer;
  const ending = ENDINGS[dialect];
  if (!ending) return walkTexts(answer, () => '', true);
  return { ...ending(answer as Answer, `the answer was blocked by guardrail "${guardrail}"`), guardrail };
}
