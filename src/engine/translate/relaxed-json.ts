// Mapping templates render JSON where a comma may trail the last member or item, so loops and optional fields need no comma bookkeeping.

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;
const closes = (c: number) => c === 93 || c === 125;

/**
 * Drops every comma followed only by whitespace and a closing bracket, leaving string literals as they are. A character
 * scan rather than a regular expression: it runs on every rendered template, several times per request and stream event.
 */
function dropTrailingCommas(text: string): string {
  let out = '';
  let from = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === COMMA) {
      let j = i + 1;
      while (j < n && isSpace(text.charCodeAt(j))) j++;
      if (closes(text.charCodeAt(j))) {
        out += text.slice(from, i);
        from = i + 1;
      }
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

export function parseRelaxedJson<T = unknown>(text: string): T {
  return JSON.parse(dropTrailingCommas(text)) as T;
}
