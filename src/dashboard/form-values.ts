// What a refused form held, to show it again with the error: each field's text (bounded), or the ticked values of a
// list, so a person fixes the one wrong field instead of typing everything again. Never used for secrets.

/** Longer than any field the dashboard's forms accept (a webhook URL is the longest, 2048). */
const MAX_KEPT_LENGTH = 2048;
/** More ticked boxes than any list on a page has. */
const MAX_KEPT_VALUES = 64;

/** One field's submitted text, or every ticked value of a list; what is not a string is dropped. */
export type KeptForm = Record<string, string | string[]>;

/** The named fields of a submitted form, bounded, as the page shows them again. */
export function keptForm(body: unknown, fields: readonly string[]): KeptForm {
  const form = (body ?? {}) as Record<string, unknown>;
  const kept: KeptForm = {};
  for (const field of fields) {
    const value = form[field];
    if (typeof value === 'string') kept[field] = value.slice(0, MAX_KEPT_LENGTH);
    else if (Array.isArray(value)) kept[field] = value.filter((v): v is string => typeof v === 'string').slice(0, MAX_KEPT_VALUES).map((v) => v.slice(0, MAX_KEPT_LENGTH));
  }
  return kept;
}
