// JSON as text: a mapping leaf that must be a JSON string (OpenAI tool-call arguments) or a text template that quotes a value.

export const filters = {
  /** Serialises any value as JSON (strings quoted and escaped). */
  json: (value: unknown) => JSON.stringify(value === undefined ? null : value),
};
