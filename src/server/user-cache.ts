// The user's cache for this package: `orch-apiserver/<part>` under `$XDG_CACHE_HOME`, else under
// `~/.cache` (the certificates of throw-away servers, the compiled form of the package's code).
// What is read back from it was written by this user alone: a directory that is not a link, and
// files opened without following links, each owned by the user with no access for group or
// others. Anything else is not read, and not written into. Files are replaced whole: written
// beside their name (mode 0600 from the start), then renamed over it.

import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** `orch-apiserver/<part>` in the user's cache directory; undefined when there is no home directory. */
export function userCacheDirectory(part: string): string | undefined {
  // (The base directory specification ignores a relative XDG_CACHE_HOME.)
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'orch-apiserver', part);
  let home: string;
  try {
    home = homedir();
  } catch {
    return undefined;
  }
  return isAbsolute(home) ? join(home, '.cache', 'orch-apiserver', part) : undefined;
}

/** Whether a file or directory is this user's alone: owned by it, no access for group or others. */
function ownedPrivately(st: Stats): boolean {
  return process.getuid !== undefined && st.uid === process.getuid() && (st.mode & 0o077) === 0;
}

/** Whether `dir` is a directory (not a link to one) that is this user's alone. */
function privateDirectory(dir: string): boolean {
  const st = lstatSync(dir);
  return st.isDirectory() && ownedPrivately(st);
}

/** The bytes of `dir/name` when the directory and the file are this user's alone; undefined otherwise (or absent, or unreadable). */
export function readPrivateFile(dir: string, name: string): Buffer | undefined {
  try {
    if (!privateDirectory(dir)) return undefined;
    const fd = openSync(join(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const st = fstatSync(fd);
      return st.isFile() && ownedPrivately(st) ? readFileSync(fd) : undefined;
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/**
 * Replaces `dir/name` with `data`, making `dir` (mode 0700) if it is missing. Whether it was
 * written: a directory that is not the user's alone, or that cannot be written, is left as it is.
 */
export function writePrivateFile(dir: string, name: string, data: string | Uint8Array): boolean {
  const temporary = join(dir, `.${name}.${process.pid}.${randomBytes(6).toString('hex')}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!privateDirectory(dir)) return false;
    writeFileSync(temporary, data, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, join(dir, name));
    return true;
  } catch {
    rmSync(temporary, { force: true });
    return false;
  }
}

/** Removes the files of `dir` that `ours` names, but the `keep` most recently written ones. */
export function pruneFiles(dir: string, ours: (name: string) => boolean, keep: number): void {
  try {
    const files = readdirSync(dir)
      .filter(ours)
      .map((name) => ({ name, at: statSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => b.at - a.at);
    for (const f of files.slice(keep)) rmSync(join(dir, f.name), { force: true });
  } catch {
    /* a cache that cannot be tidied stays as it is */
  }
}
