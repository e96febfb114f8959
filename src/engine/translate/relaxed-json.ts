// Mapping templates render JSON where a comma may trail the last member or item, so loops and optional fields need no comma bookkeeping.

// A whole string literal (kept as is) or a comma followed only by whitespace and a closing bracket (dropped).
const stringOrTrailingComma = /"[^"\\]*(?:\\.[^"\\]*)*"|,(?=\s*[\]}])/g;

export function parseRelaxedJson<T = unknown>(text: string): T {
  return JSON.parse(text.replace(stringOrTrailingComma, (match) => (match === ',' ? '' : match))) as T;
}
