// The audit log backend (`--audit-log-path`): one JSON event per line, rotated as kube-apiserver's
// (lumberjack) rotates: past `maxSizeMB` (counted on what is written) the file is renamed to
// `<name>-<UTC time>.<ext>` and a new one started; only the newest `maxBackups` backups (0: all)
// younger than `maxAgeDays` (0: any age) are kept. `-` writes to standard output. Lines keep the
// order in which events were given.
//
// `--audit-log-mode`, as kube-apiserver's:
// - `blocking` (the default): the event is taken in the request's own path and written before the
//   server does anything else: lines are gathered during the current turn of the event loop and
//   written with one write at its end (at once past 1 MiB), and at close and process exit. A write
//   the disk refuses loses those events, not the request (reported once per run of failures). A
//   crash of the process (SIGKILL, abort) loses at most the events of the turn it happened in.
// - `blocking-strict`: each event is written on its own as it is given, synchronously; a write that
//   fails is reported to the caller, and a request whose RequestReceived event could not be written
//   is refused (kube-apiserver's "failed to store audit event"). A crash loses nothing written.
// - `batch`: events are queued (at most `batchBufferSize`; past that they are dropped and the drop
//   reported) and written in the background in batches of up to `batchMaxSize` events, a batch as
//   soon as it is full or its first event waited `batchMaxWaitMs`; the whole batches that queued
//   during a write go out together in the next. A crash loses what was queued and
//   not yet written: up to the whole buffer.

import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, write as writeAsync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { ByteBuilder } from '../../machinery/byte-builder.ts';

export type AuditLogMode = 'blocking' | 'blocking-strict' | 'batch';
export const AUDIT_LOG_MODES: readonly AuditLogMode[] = ['blocking', 'blocking-strict', 'batch'];

export interface AuditLogOptions {
  path: string;
  /** `--audit-log-maxsize`: megabytes before rotation (0: never). */
  maxSizeMB?: number;
  /** `--audit-log-maxbackup`: rotated files kept (0: all). */
  maxBackups?: number;
  /** `--audit-log-maxage`: days a rotated file is kept (0: any age). */
  maxAgeDays?: number;
  /** `--audit-log-mode` (default blocking). */
  mode?: AuditLogMode;
  /** `--audit-log-batch-buffer-size`: events queued in batch mode before new ones are dropped (default 10000). */
  batchBufferSize?: number;
  /** `--audit-log-batch-max-size`: the most events in a batch, in batch mode (default 1). */
  batchMaxSize?: number;
  /** `--audit-log-batch-max-wait`: how long an event waits for its batch to fill (default 0). */
  batchMaxWaitMs?: number;
}

/** The line `line[0, length)` and its newline, in a buffer of its own. */
function ownLine(line: Buffer, length: number): Buffer {
  const own = Buffer.allocUnsafe(length + 1);
  line.copy(own, 0, 0, length);
  own[length] = 0x0a;
  return own;
}

/** Where a failed write is reported (a full disk must not take the server down with it). */
export type AuditLogErrorReporter = (message: string) => void;

export interface AuditLogBackend {
  /** Takes one line. False when it is lost and the mode says the request must know: blocking-strict, or after close. */
  write(line: string): boolean;
  /** The same for a line given as the UTF-8 bytes `line[0, length)` (copied: the caller reuses its buffer). */
  writeBytes(line: Buffer, length: number): boolean;
  /** Writes, now, whatever is waiting (batch mode: after the write under way). */
  close(): void | Promise<void>;
}

/** Past this many bytes waiting, blocking mode writes at once instead of at the end of the turn. */
const FLUSH_BYTES = 1024 * 1024;

/** What each open log writes when the process exits (one listener for all of them). */
const atExit = new Set<() => void>();
const onExit = (f: () => void) => {
  if (atExit.size === 0) process.on('exit', runAtExit);
  atExit.add(f);
};
const offExit = (f: () => void) => {
  atExit.delete(f);
  if (atExit.size === 0) process.off('exit', runAtExit);
};
function runAtExit() {
  for (const f of atExit) f();
}

/** `2026-11-26T22-50-01.123`: lumberjack's backup time format (UTC). */
const backupTime = (d: Date) => d.toISOString().replace(/:/g, '-').replace(/Z$/, '');

/** The file, its size and its rotation: lines (as bytes, each ending in a newline) written in order. */
function logFile(o: AuditLogOptions) {
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
  const writeAll = (bytes: Buffer) => {
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
    size += bytes.length;
  };
  return {
    get fd() {
      return fd;
    },
    /**
     * Splits `bytes` (lines ending at `ends`) where rotation falls (before a line that would pass the
     * size, as one line at a time would), so one write per file.
     */
    chunks(bytes: Buffer, ends: readonly number[]): Buffer[] {
      if (maxBytes <= 0) return [bytes];
      const out: Buffer[] = [];
      let start = 0;
      let prev = 0;
      let projected = size;
      for (const end of ends) {
        if (projected > 0 && projected + (end - prev) > maxBytes) {
          out.push(bytes.subarray(start, prev));
          start = prev;
          projected = 0;
        }
        projected += end - prev;
        prev = end;
      }
      out.push(bytes.subarray(start, prev));
      return out;
    },
    /** Writes the chunks of `chunks`, rotating between them. Throws what the disk answered. */
    writeChunks(parts: Buffer[]) {
      parts.forEach((p, i) => {
        if (i > 0) rotate();
        if (p.length > 0) writeAll(p);
      });
    },
    rotate,
    wrote(bytes: number) {
      size += bytes;
    },
    close() {
      closeSync(fd);
    },
  };
}

export function auditLogBackend(o: AuditLogOptions, report: AuditLogErrorReporter = () => {}): AuditLogBackend {
  const mode = o.mode ?? 'blocking';
  if (o.path === '-') {
    return {
      write: (line) => process.stdout.write(`${line}\n`) || true,
      writeBytes: (line, length) => process.stdout.write(ownLine(line, length)) || true,
      close() {},
    };
  }
  const file = logFile(o);
  let closed = false;
  let failing = false;
  const failed = (e: unknown, lost: number) => {
    // The events are lost, the requests are not: reported once per run of failures.
    if (!failing) report(`audit log ${o.path}: events are lost: ${(e as Error).message}${lost > 1 ? ` (${lost} events)` : ''}`);
    failing = true;
  };
  /** Writes lines (ending at `ends`) now, rotating between them where the size says; false when the disk refused them. */
  const writeNow = (bytes: Buffer, ends: readonly number[]): boolean => {
    try {
      file.writeChunks(file.chunks(bytes, ends));
      failing = false;
      return true;
    } catch (e) {
      failed(e, ends.length);
      return false;
    }
  };

  if (mode === 'blocking-strict') {
    return {
      write(line) {
        if (closed) return false;
        const own = Buffer.from(`${line}\n`);
        return writeNow(own, [own.length]);
      },
      writeBytes(line, length) {
        if (closed) return false;
        const own = ownLine(line, length);
        return writeNow(own, [own.length]);
      },
      close() {
        if (closed) return;
        closed = true;
        file.close();
      },
    };
  }

  if (mode === 'batch') {
    const bufferSize = o.batchBufferSize ?? 10_000;
    const maxBatch = Math.max(1, o.batchMaxSize ?? 1);
    const maxWait = o.batchMaxWaitMs ?? 0;
    // The queue: its lines as bytes, each ending in a newline, and where each ends (its length is
    // the number of events queued). A line's bytes are copied in as it comes: no string is kept
    // for it, and none is joined and encoded again when its batch is written.
    const queue = new ByteBuilder(FLUSH_BYTES);
    let ends: number[] = [];
    /** A buffer a finished write gave back, for the queue after the next write. */
    let spare: Buffer | undefined;
    let writing: Promise<void> | undefined;
    let timer: NodeJS.Timeout | undefined;
    let dropped = 0;
    const writeBatch = (bytes: Buffer, lineEnds: readonly number[]): Promise<void> =>
      new Promise((resolve) => {
        let parts: Buffer[];
        try {
          parts = file.chunks(bytes, lineEnds);
        } catch (e) {
          failed(e, lineEnds.length);
          return resolve();
        }
        // Rotation is a rename and an open: synchronous, between the writes of a batch.
        const next = (i: number) => {
          if (i >= parts.length) {
            failing = false;
            return resolve();
          }
          const p = parts[i]!;
          try {
            if (i > 0) file.rotate();
          } catch (e) {
            failed(e, lineEnds.length);
            return resolve();
          }
          const from = (off: number) =>
            writeAsync(file.fd, p, off, p.length - off, null, (err, n) => {
              if (err) {
                failed(err, lineEnds.length);
                return resolve();
              }
              file.wrote(n);
              if (off + n < p.length) from(off + n);
              else next(i + 1);
            });
          if (p.length > 0) from(0);
          else next(i + 1);
        };
        next(0);
      });
    const pump = () => {
      clearTimeout(timer);
      timer = undefined;
      const count = ends.length;
      if (writing || count === 0) return;
      // The whole batches that queued while the last write was under way go out together, in
      // order, in one write (one batch when fewer are full): a write per batch of one event (the
      // default size) could not keep up with a busy server, whose events would then be dropped.
      const n = count >= maxBatch ? count - (count % maxBatch) : count;
      const cut = ends[n - 1]!;
      const taken = queue.buf;
      const takenEnds = n === count ? ends : ends.slice(0, n);
      // What stays queued moves to the front of another buffer: the taken one is being written.
      const rest = queue.at - cut;
      const next = spare && spare.length >= rest ? spare : Buffer.allocUnsafe(Math.max(FLUSH_BYTES, rest));
      spare = undefined;
      taken.copy(next, 0, cut, queue.at);
      queue.buf = next;
      queue.at = rest;
      ends = n === count ? [] : ends.slice(n).map((e) => e - cut);
      writing = writeBatch(taken.subarray(0, cut), takenEnds).finally(() => {
        writing = undefined;
        if (taken.length === FLUSH_BYTES) spare = taken;
        if (closed) return;
        if (ends.length >= maxBatch) pump();
        else if (ends.length > 0) schedule();
      });
    };
    const schedule = () => {
      if (timer || writing) return;
      timer = setTimeout(pump, maxWait);
    };
    /** Writes what is queued now, synchronously (at close, and when the process exits). */
    const writeQueued = () => {
      if (ends.length === 0) return;
      writeNow(queue.result(), ends);
      queue.at = 0;
      ends = [];
    };
    /** False when the event is dropped: the queue is full. */
    const admit = (): boolean => {
      if (ends.length >= bufferSize) {
        // Lost, and reported, but the request goes on (as kube-apiserver's buffered backend).
        if (dropped++ === 0) report(`audit log ${o.path}: the buffer is full; events are dropped until it drains`);
        return false;
      }
      if (dropped) {
        report(`audit log ${o.path}: ${dropped} events were dropped`);
        dropped = 0;
      }
      return true;
    };
    const queuedOne = () => {
      queue.byte(0x0a);
      ends.push(queue.at);
      if (writing) return;
      if (ends.length >= maxBatch) pump();
      else schedule();
    };
    // The process is going: what is queued is written now, as far as the disk takes it.
    onExit(writeQueued);
    return {
      write(line) {
        if (closed) return false;
        if (!admit()) return true;
        queue.text(line);
        queuedOne();
        return true;
      },
      writeBytes(line, length) {
        if (closed) return false;
        if (!admit()) return true;
        queue.copyFrom(line, length);
        queuedOne();
        return true;
      },
      async close() {
        if (closed) return;
        closed = true;
        clearTimeout(timer);
        await writing;
        offExit(writeQueued);
        writeQueued();
        file.close();
      },
    };
  }

  // blocking: one write per turn of the event loop.
  return blocking(file, writeNow);
}

/**
 * Blocking mode: each line is copied (or encoded) at once into one buffer, with where it ends (its
 * string, if it came as one, is then garbage, never a survivor of a collection, and is not joined
 * and encoded again at the end of the turn), and the buffer written in one write at the end of the
 * turn (at once when the next line might not fit), split where the file rotates.
 */
function blocking(file: ReturnType<typeof logFile>, writeOut: (bytes: Buffer, ends: readonly number[]) => boolean): AuditLogBackend {
  const bytes = Buffer.allocUnsafe(FLUSH_BYTES);
  let used = 0;
  let ends: number[] = [];
  let closed = false;
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    if (used === 0) return;
    const n = used;
    const lineEnds = ends;
    used = 0;
    ends = [];
    writeOut(bytes.subarray(0, n), lineEnds);
  };
  /** Room for `most` bytes more; false when the line is larger than the buffer (written on its own, in order, by the caller). */
  const room = (most: number): boolean => {
    if (used + most <= bytes.length) return true;
    flush();
    return most <= bytes.length;
  };
  const added = () => {
    bytes[used++] = 0x0a;
    ends.push(used);
    scheduled ??= setImmediate(flush);
    return true;
  };
  onExit(flush);
  return {
    write(line) {
      if (closed) return false;
      // At most three bytes per UTF-16 unit, and the newline.
      if (!room(line.length * 3 + 1)) {
        const own = Buffer.from(`${line}\n`);
        writeOut(own, [own.length]);
        return true;
      }
      used += bytes.write(line, used, 'utf8');
      return added();
    },
    writeBytes(line, length) {
      if (closed) return false;
      if (!room(length + 1)) {
        const own = ownLine(line, length);
        writeOut(own, [own.length]);
        return true;
      }
      line.copy(bytes, used, 0, length);
      used += length;
      return added();
    },
    close() {
      // A request still completing while the server shuts down: its event has nowhere to go.
      if (closed) return;
      flush();
      closed = true;
      offExit(flush);
      file.close();
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
