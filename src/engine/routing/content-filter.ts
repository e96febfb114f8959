// Whether a chat answer, in the client's dialect, is one a content filter stopped: the name a route's `failover.on` gives
// it is `content_filter` (docs/routing.md, "Failover"). Read on the answer as the client would get it, so a translated
// target's filter counts as its translation reports it (Anthropic's refusal is chat's content_filter, and back).
type Answer = Record<string, any>;

const stoppedBy: Readonly<Record<string, (answer: Answer) => boolean>> = {
  'openai-chat': (answer) => Array.isArray(answer.choices) && answer.choices.some((choice: Answer | null) => choice?.finish_reason === 'content_filter'),
  'anthropic-messages': (answer) => answer.stop_reason === 'refusal',
  'openai-responses': (answer) => answer.status === 'incomplete' && answer.incomplete_details?.reason === 'content_filter',
};

/** True when a content filter stopped `answer` (a chat answer in `dialect`); false for any other answer or dialect. */
export function contentFiltered(dialect: string, answer: unknown): boolean {
  const test = stoppedBy[dialect];
  return !!test && !!answer && typeof answer === 'object' && test(answer as Answer);
}
