// The memory store: answers held as the flat strings they were serialised to, least recently used out once the bytes
// held pass a bound, each until its TTL. Keyv's own memory path serialises every value again (about 150 us a write, and
// twice the bytes held); Buffers would each pin a slab of the shared pool (or, unpooled, cost a malloc each). Recency is
// a linked list: a Map's first key is found past every key deleted before it, so evicting from its front slows down.

/** What one entry costs besides its key and its text: the Map slot, the node and the string's header (a generous guess). */
const ENTRY_OVERHEAD = 160;

/** Bytes a string takes on the heap, at most: one per character when it is ASCII (its UTF-8 length says so), else two. */
const heapBytes = (text: string, utf8Bytes = Buffer.byteLength(text)) => (utf8Bytes === text.length ? 1 : 2) * text.length;

interface Node {
  key: string;
  text: string;
  size: number;
  /** Unix milliseconds it expires at. */
  expires: number;
  older?: Node;
  newer?: Node;
}

export class ByteBoundedLru {
  private readonly nodes = new Map<string, Node>();
  private oldest?: Node;
  private newest?: Node;
  /** Bytes held now, keys and overheads counted. */
  bytes = 0;
  /** Entries dropped to make room, since the map was made. */
  evictions = 0;

  constructor(
    readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.nodes.size;
  }

  get(key: string): string | undefined {
    const node = this.nodes.get(key);
    if (!node) return undefined;
    if (node.expires <= this.now()) {
      this.remove(node);
      return undefined;
    }
    this.unlink(node);
    this.append(node);
    return node.text;
  }

  /** Keeps `text` (of `utf8Bytes`, when the caller knows) for `ttlMs`; false when it alone is larger than the bound (then nothing is kept under `key`). */
  set(key: string, text: string, ttlMs: number, utf8Bytes?: number): boolean {
    this.delete(key);
    const size = 2 * key.length + heapBytes(text, utf8Bytes) + ENTRY_OVERHEAD;
    if (size > this.maxBytes) return false;
    const node: Node = { key, text, size, expires: this.now() + ttlMs };
    this.nodes.set(key, node);
    this.append(node);
    this.bytes += size;
    while (this.bytes > this.maxBytes && this.oldest) {
      this.remove(this.oldest);
      this.evictions++;
    }
    return true;
  }

  delete(key: string): boolean {
    const node = this.nodes.get(key);
    if (node) this.remove(node);
    return node !== undefined;
  }

  private remove(node: Node): void {
    this.nodes.delete(node.key);
    this.unlink(node);
    this.bytes -= node.size;
  }

  private append(node: Node): void {
    node.older = this.newest;
    node.newer = undefined;
    if (this.newest) this.newest.newer = node;
    this.newest = node;
    this.oldest ??= node;
  }

  private unlink(node: Node): void {
    if (node.older) node.older.newer = node.newer;
    else this.oldest = node.newer;
    if (node.newer) node.newer.older = node.older;
    else this.newest = node.older;
    node.older = node.newer = undefined;
  }
}
