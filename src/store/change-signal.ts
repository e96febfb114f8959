// The cross-process signal that keys, workspaces or caps changed: an epoch file beside the SQLite database, touched by
// whichever process committed the change and watched (inotify, through fs.watch) by every process serving from the file.
//
// Why a watched file, not the alternatives: every writer of the file (cluster workers, the admin CLI, a second gateway
// process on the same file) already shares its folder, and nothing else: the cluster's IPC does not reach the CLI or a
// second gateway, and Redis is not there on a single host. `PRAGMA data_version` moves with every spend settlement the
// spend thread commits (each request), so it would still mean a statement per request that says "changed" nearly always.
//
// Why it is exact: the writer touches the file after its commit and before it answers (the admin API's response, the
// CLI's exit), so the kernel has queued the watch event on every watcher before any request that follows the write is
// sent. libuv handles the file descriptors epoll reports in the order they became ready, so a process handles the event
// (and marks the counter stale) before it reads that request from its socket.
import { closeSync, openSync, utimesSync, watch, type FSWatcher } from 'node:fs';

export interface ChangeSignal {
  /** Tells every process watching the file (this one included, a turn later) that the change counter moved. */
  announce(): void;
  /** Stops watching. */
  close(): void;
}

/** The epoch file of a SQLite database file. */
export const epochFileOf = (databasePath: string): string => `${databasePath}.auth-epoch`;

/** Creates the file when it is missing, leaves it as it is otherwise. */
function ensureFile(path: string): void {
  closeSync(openSync(path, 'a'));
}

/**
 * Watches `path` (created when missing): `changed()` runs whenever some process announces. `lost()` runs when the
 * file cannot be watched (no inotify instance left, say): the caller then has no signal and must read for itself.
 */
export function watchChangeSignal(path: string, changed: () => void, lost: () => void): ChangeSignal {
  let watcher: FSWatcher | undefined;
  let closed = false;
  const start = () => {
    try {
      ensureFile(path);
      watcher = watch(path, { persistent: false }, onEvent);
      watcher.on('error', fail);
    } catch {
      fail();
    }
  };
  // 'rename': the file was removed or replaced; the watch followed the old inode, so watch the path again.
  function onEvent(event: string) {
    changed();
    if (event !== 'rename' || closed) return;
    watcher?.close();
    start();
  }
  function fail() {
    watcher?.close();
    watcher = undefined;
    if (!closed) lost();
  }
  start();
  return {
    announce() {
      const touch = () => {
        const now = new Date();
        utimesSync(path, now, now);
      };
      try {
        touch();
      } catch {
        // Removed meanwhile: made again and touched (the watchers follow the new file once they saw the old one go).
        // Should that fail too (a read-only folder), the others see the change at their next safety re-read.
        try {
          ensureFile(path);
          touch();
        } catch {
          // Nothing more to do from here.
        }
      }
    },
    close() {
      closed = true;
      watcher?.close();
    },
  };
}
