// Filters that carry an upstream's opaque per-call state inside the tool call id a client echoes back: an API that wants
// a value returned with the call (a signature) while the client's dialect has no field for it.
type Scalar = string | undefined | null;

/** Marks the carried part of an id: the last `_`-separated segment, `ts` and the value's bytes in lower-case hex. */
const MARK = '_ts';
const HEX = /^[0-9a-f]+$/;

export const filters = {
  /**
   * The id with `state` (base64 text, as JSON carries bytes) appended in hex, so it stays within the characters every
   * dialect's ids allow (letters, digits, `_`); the id unchanged when there is no state.
   */
  carry_in_id: (id: unknown, state: unknown) => {
    const value = state as Scalar;
    if (typeof value !== 'string' || value === '') return id;
    return `${String(id)}${MARK}${Buffer.from(value, 'base64').toString('hex')}`;
  },

  /** The state `carry_in_id` put in an id, as base64 again; nil for an id that carries none (one the client made). */
  carried_in_id: (id: unknown) => {
    if (typeof id !== 'string') return null;
    const at = id.lastIndexOf(MARK);
    const hex = at < 0 ? '' : id.slice(at + MARK.length);
    if (!hex || hex.length % 2 !== 0 || !HEX.test(hex)) return null;
    return Buffer.from(hex, 'hex').toString('base64');
  },
};
