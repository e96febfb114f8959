// The memory store's map: least recently used entries out once the bytes held pass a bound. Keyv hands it serialised
// strings, so an entry's size is its key's and its text's length in bytes (UTF-16 code units would undercount nothing
// that matters: the bound is on what the process holds, and both are counted once).
export class ByteBoundedLru extends Map<string, unknown> {
  /** Bytes of keys and values held now. */
  bytes = 0;
  /** Entries dropped to make room, since the map was made. */
  evictions = 0;

  constructor(readonly maxBytes: number) {
    super();
  }

  override get(key: string): unknown {
    const value = super.get(key);
    if (value === undefined) return undefined;
    // Most recently used last: Map keeps insertion order, so the first key is the least recently used.
    super.delete(key);
    super.set(key, value);
    return value;
  }

  override set(key: string, value: unknown): this {
    const size = sizeOf(key, value);
    if (size > this.maxBytes) {
      this.delete(key);
      return this;
    }
    this.delete(key);
    super.set(key, value);
    this.bytes += size;
    for (const oldest of super.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.delete(oldest);
      this.evictions++;
    }
    return this;
  }

  override delete(key: string): boolean {
    const value = super.get(key);
    if (value === undefined) return false;
    this.bytes -= sizeOf(key, value);
    return super.delete(key);
  }

  override clear(): void {
    super.clear();
    this.bytes = 0;
  }
}

function sizeOf(key: string, value: unknown): number {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  return Buffer.byteLength(key) + Buffer.byteLength(text);
}
