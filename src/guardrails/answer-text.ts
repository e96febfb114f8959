// The text of a whole answer as each chat dialect carries it, for checks that read the answer as one text (schema):
// each OpenAI chat choice's `message.content`, a Messages answer's text blocks joined, a Responses answer's output_text
// parts joined. An answer with no text (tool calls only) has none; a dialect not listed has none.
type Answer = Record<string, unknown>;

const list = (value: unknown): Answer[] => (Array.isArray(value) ? (value as Answer[]).filter((v) => v && typeof v === 'object') : []);
const textsOfType = (parts: unknown, type: string): string[] => list(parts).flatMap((p) => (p.type === type && typeof p.text === 'string' ? [p.text] : []));

const TEXTS: Record<string, (answer: Answer) => string[]> = {
  'openai-chat': (answer) => list(answer.choices).flatMap((choice) => {
    const content = (choice.message as Answer | undefined)?.content;
    return typeof content === 'string' ? [content] : [];
  }),
  'anthropic-messages': (answer) => {
    const texts = textsOfType(answer.content, 'text');
    return texts.length ? [texts.join('')] : [];
  },
  'openai-responses': (answer) => {
    const texts = list(answer.output).flatMap((item) => (item.type === 'message' ? textsOfType(item.content, 'output_text') : []));
    return texts.length ? [texts.join('')] : [];
  },
};

/** The answer's texts, each to be read whole (one per chat choice); empty when it has none. */
export function answerTexts(answer: unknown, dialect: string): string[] {
  const read = Object.hasOwn(TEXTS, dialect) ? TEXTS[dialect] : undefined;
  return read !== undefined && answer && typeof answer === 'object' && !Array.isArray(answer) ? read(answer as Answer) : [];
}
