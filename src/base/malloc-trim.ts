// Gives the C heap's free pages back to the system once the process has settled (issue 52: RSS idle under 100 MiB a
// worker). Under load, the sockets' read buffers and the compilers' zones are malloc'd and freed by the thousand; glibc
// keeps the freed pages in its arenas (free() returns only an arena's top), so a worker idle after a held-rate run stayed
// 30-50 MiB above its start, its JS heap long settled (bench/README.md, the sixth and tenth sessions). glibc's
// `malloc_trim(0)` hands back every whole free page of every arena (madvise), measured 109.8 -> 91.5 MiB on a worker
// idle 45 s after a c=128 run. Node does not expose it; koffi (a C FFI with prebuilt binaries) calls it, loaded the
// first time a settling trims and never on a system without glibc (macOS, musl): there the trim does nothing.
import { requireOnUse } from './load-on-use.js';

type Koffi = typeof import('koffi');

const koffi = requireOnUse<Koffi>('koffi', "returning the C heap's free pages to the system (malloc_trim)");

let trim: (() => number) | null | undefined;

/** glibc's malloc_trim(0), bound once; null where there is none to call (not Linux, no glibc's libc.so.6 (musl), no koffi). */
function bind(): (() => number) | null {
  if (process.platform !== 'linux') return null;
  try {
    const mallocTrim = koffi().load('libc.so.6').func('int malloc_trim(size_t pad)');
    return () => mallocTrim(0) as number;
  } catch {
    return null;
  }
}

/** Returns the C heap's whole free pages to the system; true when glibc released some. Costs a few ms: call it idle. */
export function trimCHeap(): boolean {
  if (trim === undefined) trim = bind();
  return trim !== null && trim() === 1;
}
