// The scopes a key can hold: the gateway's own, and every scope an endpoint of the loaded catalogue declares.

/** Scopes the gateway's own routes check (files, and the shipped families' endpoints name them in the catalogue too). */
const BUILT_IN = ['llm.evaluate', 'llm.chat', 'images.generate', 'videos.generate', 'files.write', 'mcp.tools'] as const;

const known: string[] = [...BUILT_IN];

/** Every scope a key may be given, built-in first, then those the catalogue declared, in the order they were declared. */
export const SCOPES: readonly string[] = known;
export type Scope = string;

/** Makes the scopes a loaded catalogue's endpoints declare known (a key can then be given them); called for each config loaded. */
export function declareScopes(scopes: Iterable<string | null | undefined>): void {
  for (const scope of scopes) if (scope && !known.includes(scope)) known.push(scope);
}

export function isScope(value: string): value is Scope {
  return known.includes(value);
}
