// Dot paths (`message.usage`, `response.output`) into parsed JSON: how operations say where something is, as data.

export function readPath(value: unknown, path: string | readonly string[]): unknown {
  let current = value;
  for (const key of typeof path === 'string' ? path.split('.') : path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
