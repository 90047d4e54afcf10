// Typed storage errors. The API layer maps each to a Status: exists → 409 AlreadyExists,
// not found → 404, conflict → 409 Conflict, compacted → 410 Expired/Gone, too slow → watch ERROR,
// unavailable → 503/504, insufficient storage → 507.
import type { KeyValue } from './interface.ts';

export class StorageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class KeyExistsError extends StorageError {
  constructor(readonly key: string) {
    super(`key exists: ${key}`);
  }
}

export class KeyNotFoundError extends StorageError {
  constructor(readonly key: string) {
    super(`key not found: ${key}`);
  }
}

/** A compare-and-swap lost: `current` is the key as it is now, so the caller can retry. */
export class ConflictError extends StorageError {
  constructor(
    readonly key: string,
    readonly expectedModRevision: number,
    readonly current: KeyValue,
  ) {
    super(`conflict on ${key}: expected modRevision ${expectedModRevision}, found ${current.modRevision}`);
  }
}

/** The requested revision is older than the oldest one kept. */
export class CompactedError extends StorageError {
  constructor(
    readonly requestedRevision: number,
    readonly compactRevision: number,
  ) {
    super(`required revision ${requestedRevision} has been compacted; oldest available is ${compactRevision}`);
  }
}

/** A read asked for a revision the store has not reached yet. */
export class FutureRevisionError extends StorageError {
  constructor(
    readonly requestedRevision: number,
    readonly currentRevision: number,
  ) {
    super(`revision ${requestedRevision} is newer than the current revision ${currentRevision}`);
  }
}

/** A watcher could not keep up with the event stream and was closed so others are not held back. */
export class WatcherTooSlowError extends StorageError {
  constructor(readonly bufferSize: number) {
    super(`watcher fell behind by more than ${bufferSize} events and was closed`);
  }
}

/** The backend cannot be reached (every endpoint down) or the store is closed. */
export class UnavailableError extends StorageError {}

/**
 * A write could not be committed because the disk (or the store's map) is full. Nothing of it was
 * stored; reads go on working and writes succeed again once space is freed.
 */
export class InsufficientStorageError extends StorageError {}
