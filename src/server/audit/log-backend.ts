// The audit log backend (`--audit-log-path`): one JSON event per line, appended synchronously so a
// line is never torn or lost to a crash after the request was answered, and rotated as
// kube-apiserver's (lumberjack) rotates: past `maxSizeMB` the file is renamed to
// `<name>-<UTC time>.<ext>` and a new one started; only the newest `maxBackups` backups (0: all)
// younger than `maxAgeDays` (0: any age) are kept. `-` writes to standard output.

import { appendFileSync, closeSync, fstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

export interface AuditLogOptions {
  path: string;
  /** `--audit-log-maxsize`: megabytes before rotation (0: never). */
  maxSizeMB?: number;
  /** `--audit-log-maxbackup`: rotated files kept (0: all). */
  maxBackups?: number;
  /** `--audit-log-maxage`: days a rotated file is kept (0: any age). */
  maxAgeDays?: number;
}

/** Where a failed write is reported (a full disk must not take the server down with it). */
export type AuditLogErrorReporter = (message: string) => void;

export interface AuditLogBackend {
  write(line: string): void;
  close(): void;
}

/** `2026-11-26T22-50-01.123`: lumberjack's backup time format (UTC). */
const backupTime = (d: Date) => d.toISOString().replace(/:/g, '-').replace(/Z$/, '');

export function auditLogBackend(o: AuditLogOptions, report: AuditLogErrorReporter = () => {}): AuditLogBackend {
  if (o.path === '-') return { write: (line) => void process.stdout.write(`${line}\n`), close() {} };
  mkdirSync(dirname(o.path), { recursive: true });
  const maxBytes = (o.maxSizeMB ?? 0) * 1024 * 1024;
  let fd = openSync(o.path, 'a', 0o600);
  let size = fstatSync(fd).size;
  const ext = extname(o.path);
  const stem = basename(o.path, ext);
  const dir = dirname(o.path);
  const isBackup = (f: string) => f.startsWith(`${stem}-`) && f.endsWith(ext) && /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}$/.test(f.slice(stem.length + 1, f.length - ext.length));
  const prune = () => {
    const backups = readdirSync(dir).filter(isBackup).sort().reverse();
    const maxAgeMs = (o.maxAgeDays ?? 0) * 86_400_000;
    backups.forEach((f, i) => {
      const tooMany = (o.maxBackups ?? 0) > 0 && i >= o.maxBackups!;
      const tooOld = maxAgeMs > 0 && Date.now() - statSync(join(dir, f)).mtimeMs > maxAgeMs;
      if (tooMany || tooOld) rmSync(join(dir, f), { force: true });
    });
  };
  const rotate = () => {
    closeSync(fd);
    try {
      let target = join(dir, `${stem}-${backupTime(new Date())}${ext}`);
      // Two rotations within a millisecond: the later waits for a name of its own.
      for (let t = Date.now() + 1; statSafe(target); t++) target = join(dir, `${stem}-${backupTime(new Date(t))}${ext}`);
      renameSync(o.path, target);
    } finally {
      // Renamed or not, writing goes on into the file at the path.
      fd = openSync(o.path, 'a', 0o600);
      size = fstatSync(fd).size;
    }
    prune();
  };
  let closed = false;
  let failing = false;
  return {
    write(line) {
      // A request still completing while the server shuts down: its event has nowhere to go.
      if (closed) return;
      const bytes = Buffer.byteLength(line) + 1;
      try {
        if (maxBytes > 0 && size > 0 && size + bytes > maxBytes) rotate();
        appendFileSync(fd, `${line}\n`);
        size += bytes;
        failing = false;
      } catch (e) {
        // The event is lost, the request is not: reported once per run of failures.
        if (!failing) report(`audit log ${o.path}: events are lost: ${(e as Error).message}`);
        failing = true;
      }
    },
    close() {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}

function statSafe(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
