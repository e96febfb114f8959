// The memory store: values least recently used out once the bytes held pass a bound, each until its TTL, and each
// owner (a workspace) held to a share of that bound, so that no workspace evicts every other's answers. Keyv's own
// memory path serialises every value again (about 150 us a write, and twice the bytes held); the store keeps its
// entries as the objects they are. Recency is a linked list (one for all, one per owner): a Map's first key is found
// past every key deleted before it, so evicting from its front slows down.

/** What one entry costs besides its key and its value: the Map slot, the node and the value's headers (a generous guess). */
export const ENTRY_OVERHEAD = 160;

/** Bytes a string takes on the heap, at most: one per character when it is ASCII (its UTF-8 length says so), else two. */
export const heapBytes = (text: string, utf8Bytes = Buffer.byteLength(text)) => (utf8Bytes === text.length ? 1 : 2) * text.length;

interface Node<V> {
  key: string;
  value: V;
  size: number;
  /** Unix milliseconds it expires at. */
  expires: number;
  owner: Owner<V>;
  older?: Node<V>;
  newer?: Node<V>;
  ownerOlder?: Node<V>;
  ownerNewer?: Node<V>;
}

/** One owner's entries: their bytes and their own recency list. */
interface Owner<V> {
  name: string;
  bytes: number;
  oldest?: Node<V>;
  newest?: Node<V>;
}

export class ByteBoundedLru<V = string> {
  private readonly nodes = new Map<string, Node<V>>();
  private readonly owners = new Map<string, Owner<V>>();
  private oldest?: Node<V>;
  private newest?: Node<V>;
  /** Bytes held now, keys and overheads counted. */
  bytes = 0;
  /** Entries dropped to make room (for all, or within their owner's share), since the map was made. */
  evictions = 0;

  constructor(
    readonly maxBytes: number,
    private readonly now: () => number = Date.now,
    /** The most bytes one owner's entries hold; past it, that owner's least recently used go first. */
    readonly maxOwnerBytes = maxBytes,
  ) {}

  get size(): number {
    return this.nodes.size;
  }

  /** Bytes held by one owner's entries. */
  ownerBytes(owner: string): number {
    return this.owners.get(owner)?.bytes ?? 0;
  }

  get(key: string): V | undefined {
    const node = this.nodes.get(key);
    if (!node) return undefined;
    if (node.expires <= this.now()) {
      this.remove(node);
      return undefined;
    }
    this.unlink(node);
    this.append(node);
    this.ownerUnlink(node);
    this.ownerAppend(node);
    return node.value;
  }

  /**
   * Keeps `value` (of `valueBytes` on the heap) for `ttlMs`, counted to `owner`; false when it alone is larger than the
   * bound or the owner's share (then nothing is kept under `key`).
   */
  set(key: string, value: V, ttlMs: number, valueBytes: number, owner = ''): boolean {
    this.delete(key);
    const size = 2 * key.length + valueBytes + ENTRY_OVERHEAD;
    if (size > this.maxBytes || size > this.maxOwnerBytes) return false;
    let held = this.owners.get(owner);
    if (!held) this.owners.set(owner, (held = { name: owner, bytes: 0 }));
    const node: Node<V> = { key, value, size, expires: this.now() + ttlMs, owner: held };
    this.nodes.set(key, node);
    this.append(node);
    this.ownerAppend(node);
    held.bytes += size;
    this.bytes += size;
    while (held.bytes > this.maxOwnerBytes && held.oldest) this.evict(held.oldest);
    while (this.bytes > this.maxBytes && this.oldest) this.evict(this.oldest);
    return true;
  }

  delete(key: string): boolean {
    const node = this.nodes.get(key);
    if (node) this.remove(node);
    return node !== undefined;
  }

  private evict(node: Node<V>): void {
    this.remove(node);
    this.evictions++;
  }

  private remove(node: Node<V>): void {
    this.nodes.delete(node.key);
    this.unlink(node);
    this.bytes -= node.size;
    node.owner.bytes -= node.size;
    this.ownerUnlink(node);
    if (node.owner.oldest === undefined) this.owners.delete(node.owner.name);
  }

  private ownerAppend(node: Node<V>): void {
    const owner = node.owner;
    node.ownerOlder = owner.newest;
    node.ownerNewer = undefined;
    if (owner.newest) owner.newest.ownerNewer = node;
    owner.newest = node;
    owner.oldest ??= node;
  }

  private ownerUnlink(node: Node<V>): void {
    const owner = node.owner;
    if (node.ownerOlder) node.ownerOlder.ownerNewer = node.ownerNewer;
    else owner.oldest = node.ownerNewer;
    if (node.ownerNewer) node.ownerNewer.ownerOlder = node.ownerOlder;
    else owner.newest = node.ownerOlder;
    node.ownerOlder = node.ownerNewer = undefined;
  }

  private append(node: Node<V>): void {
    node.older = this.newest;
    node.newer = undefined;
    if (this.newest) this.newest.newer = node;
    this.newest = node;
    this.oldest ??= node;
  }

  private unlink(node: Node<V>): void {
    if (node.older) node.older.newer = node.newer;
    else this.oldest = node.newer;
    if (node.newer) node.newer.older = node.older;
    else this.newest = node.older;
    node.older = node.newer = undefined;
  }
}
