// Filters for rendering JSON from Liquid: every mapping template renders a JSON document.

export const filters = {
  /** Serialises any value as JSON (strings quoted and escaped). */
  json: (value: unknown) => JSON.stringify(value === undefined ? null : value),
};
