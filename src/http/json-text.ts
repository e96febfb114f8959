// A request body's own JSON text, kept beside its parsed value, so a pass-through can relay the client's bytes with only
// top-level members replaced: numbers keep their digits (2^53 + 1 stays ...993), spelling and order stay the client's.

/**
 * Hands back the object it is given, so that a subclass's private field is set on that object: the way a text rides on
 * a parsed body or an outgoing document. A private field is invisible to everything else (a spread, Object.assign,
 * Object.keys, JSON.stringify, structuredClone, getOwnPropertySymbols), so a copy of a body never claims its text. Kept
 * in WeakMaps before: four entries a request, each set and read about eight times slower than a field (the table of
 * entries whose bodies are gone but not yet collected grows between collections), and each an ephemeron every
 * collection had to trace again.
 */
class Carrier {
  constructor(object: object) {
    return object;
  }
}

/** One text field: its own private name, so the two texts below never see each other's. */
function textField() {
  return class TextField extends Carrier {
    #text: string | undefined;

    private constructor(object: object, text: string | undefined) {
      super(object);
      this.#text = text;
    }

    /** Sets the object's text; undefined clears one it has (and sets none on an object that has none). */
    static keep(object: object, text: string | undefined): void {
      if (#text in object) (object as TextField).#text = text;
      else if (text !== undefined) new TextField(object, text);
    }

    static of(object: object): string | undefined {
      return #text in object ? (object as TextField).#text : undefined;
    }
  };
}

/** The JSON text a parsed body was read from; undefined once a stage changed the body in place. */
const SourceText = textField();
/** The JSON text an outgoing document is sent as, when it is not `JSON.stringify(document)`. */
const EncodedText = textField();

/** Keeps the JSON text `body` (a JSON object) was parsed from. */
export function keepSourceText(body: unknown, text: string): void {
  if (body && typeof body === 'object' && !Array.isArray(body)) SourceText.keep(body, text);
}

/** The client's JSON text of `body`, or undefined when it has none (not JSON, or changed since it was parsed). */
export function sourceTextOf(body: object): string | undefined {
  return SourceText.of(body);
}

/** Forget the text of a body a stage changed in place (its text no longer says what the body holds). */
export function forgetSourceText(body: object): void {
  SourceText.keep(body, undefined);
}

/** Sends `document` as `text` rather than `JSON.stringify(document)`. */
export function sendAsText(document: object, text: string): void {
  EncodedText.keep(document, text);
}

export function encodedTextOf(document: unknown): string | undefined {
  return document && typeof document === 'object' ? EncodedText.of(document) : undefined;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Index just past the string that starts at `i` (a quote): the next quote not escaped, found by indexOf. */
function skipString(text: string, i: number): number {
  for (let from = i + 1; ; ) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Index just past the value that starts at `i`: a string, an object or array (strings inside skipped), or a literal. */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22) return skipString(text, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (; i < text.length; i++) {
      const d = text.charCodeAt(i);
      if (d === 0x22) {
        i = skipString(text, i) - 1;
        if (i < 0) return -1;
      } else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        if (--depth === 0) return i + 1;
      }
    }
    return -1;
  }
  while (i < text.length) {
    const d = text.charCodeAt(i);
    if (d === 0x2c || d === 0x7d || d === 0x5d || isSpace(d)) break;
    i++;
  }
  return i;
}

/**
 * `text` (a JSON object, already parsed once, so well formed) with the values of the top-level members named in
 * `values` replaced by the given JSON texts; a name the object lacks is appended as a new member. Everything else,
 * byte for byte, as it was. Undefined when the text is not an object (the caller then serialises the parsed value).
 */
export function replaceTopLevel(text: string, values: Record<string, string>): string | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return undefined;
  const names = Object.keys(values);
  const found = new Array<boolean>(names.length).fill(false);
  let out = '';
  let copied = 0;
  let members = 0;
  i = skipSpace(text, i + 1);
  while (i < text.length && text.charCodeAt(i) !== 0x7d) {
    if (text.charCodeAt(i) !== 0x22) return undefined;
    const keyEnd = skipString(text, i);
    if (keyEnd < 0) return undefined;
    const which = memberIndex(text, i, keyEnd, names);
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a) return undefined;
    const start = skipSpace(text, i + 1);
    const end = skipValue(text, start);
    if (end < 0) return undefined;
    members++;
    if (which >= 0) {
      out += text.slice(copied, start) + values[names[which]];
      copied = end;
      found[which] = true;
    }
    i = skipSpace(text, end);
    if (text.charCodeAt(i) === 0x2c) i = skipSpace(text, i + 1);
  }
  if (i >= text.length) return undefined;
  let added = '';
  names.forEach((name, n) => {
    if (!found[n]) added += `${members++ === 0 ? '' : ','}${JSON.stringify(name)}:${values[name]}`;
  });
  return out + text.slice(copied, i) + added + text.slice(i);
}

/** Which of `names` the member name quoted at text[start, end) is, or -1; compared in place (no key string made). */
function memberIndex(text: string, start: number, end: number, names: string[]): number {
  for (let k = start + 1; k < end - 1; k++) {
    if (text.charCodeAt(k) === 0x5c) return names.indexOf(JSON.parse(text.slice(start, end)) as string);
  }
  const length = end - start - 2;
  for (let n = 0; n < names.length; n++) {
    if (names[n].length === length && text.startsWith(names[n], start + 1)) return n;
  }
  return -1;
}

/**
 * `text` (a JSON object) with the top-level members named in `remove` left out and those in `values` set (replaced in
 * place, or appended): each kept member's text as it was, the members joined by commas. Undefined when the text is not
 * an object.
 */
export function editTopLevel(text: string, values: Record<string, string>, remove: readonly string[]): string | undefined {
  if (!remove.length) return replaceTopLevel(text, values);
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return undefined;
  const names = Object.keys(values);
  const found = new Array<boolean>(names.length).fill(false);
  const members: string[] = [];
  i = skipSpace(text, i + 1);
  while (i < text.length && text.charCodeAt(i) !== 0x7d) {
    if (text.charCodeAt(i) !== 0x22) return undefined;
    const keyStart = i;
    const keyEnd = skipString(text, i);
    if (keyEnd < 0) return undefined;
    const set = memberIndex(text, keyStart, keyEnd, names);
    const dropped = memberIndex(text, keyStart, keyEnd, remove as string[]) >= 0;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a) return undefined;
    const start = skipSpace(text, i + 1);
    const end = skipValue(text, start);
    if (end < 0) return undefined;
    if (set >= 0) {
      found[set] = true;
      members.push(`${text.slice(keyStart, start)}${values[names[set]]}`);
    } else if (!dropped) members.push(text.slice(keyStart, end));
    i = skipSpace(text, end);
    if (text.charCodeAt(i) === 0x2c) i = skipSpace(text, i + 1);
  }
  if (i >= text.length) return undefined;
  names.forEach((name, n) => {
    if (!found[n]) members.push(`${JSON.stringify(name)}:${values[name]}`);
  });
  return `{${members.join(',')}}`;
}
