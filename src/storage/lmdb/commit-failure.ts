// What a failed LMDB commit means for the caller: a full disk (507) or an unavailable store.
import type { RootDatabase } from 'lmdb';
import { statfs } from 'node:fs/promises';
import { InsufficientStorageError, UnavailableError } from '../errors.ts';

/**
 * lmdb-js rejects a promise of its own batch when a commit fails, and nobody else holds it: left
 * alone it is an unhandled rejection, which ends the process. The failure reaches the writer
 * through its transaction's promise; this one is only silenced.
 */
export function ignoreCommitFailure(env: RootDatabase): void {
  void (env.committed as PromiseLike<unknown>).then(undefined, () => {});
}

/** MDB_MAP_FULL: the environment's map size is reached. */
const MDB_MAP_FULL = -30792;

/**
 * The error a failed commit is reported as. LMDB reports a short write on a full disk as EIO, so
 * EIO counts as "full" when the filesystem has (next to) no room left.
 */
export async function commitFailure(err: unknown, path: string): Promise<Error> {
  const cause = (err as { commitError?: Promise<unknown> }).commitError;
  const detail = cause ? await cause.then(() => undefined, (e: unknown) => e) : err;
  const code = (detail as { code?: unknown } | undefined)?.code;
  const message = detail instanceof Error ? detail.message : String(detail ?? err);
  let full = code === 'ENOSPC' || code === 28 || code === 'EDQUOT' || code === 122 || code === MDB_MAP_FULL;
  if (!full && (code === 5 || code === 'EIO')) {
    const fs = await statfs(path).catch(() => undefined);
    full = fs !== undefined && fs.bavail * fs.bsize < 8 * 1024 * 1024;
  }
  if (full) return new InsufficientStorageError(`the storage has no space left for this write (${message}); free disk space to accept writes again`);
  return new UnavailableError(`storage commit failed: ${message}`);
}
