// Reads a path (the members a Liquid path such as `"{{ answer.message.usage }}"` walks, src/config/paths.ts) in parsed JSON.

export function readPath(value: unknown, path: string | readonly string[]): unknown {
  let current = value;
  for (const key of typeof path === 'string' ? path.split('.') : path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
