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
  readonly key: string;
  constructor(key: string) {
    super(`key exists: ${key}`);
    this.key = key;
  }
}

export class KeyNotFoundError extends StorageError {
  readonly key: string;
  constructor(key: string) {
    super(`key not found: ${key}`);
    this.key = key;
  }
}

/** A compare-and-swap lost: `current` is the key as it is now, so the caller can retry. */
export class ConflictError extends StorageError {
  readonly key: string;
  readonly expectedModRevision: number;
  readonly current: KeyValue;
  constructor(
    key: string,
    expectedModRevision: number,
    current: KeyValue,
  ) {
    super(`conflict on ${key}: expected modRevision ${expectedModRevision}, found ${current.modRevision}`);
    this.key = key;
    this.expectedModRevision = expectedModRevision;
    this.current = current;
  }
}

/** The requested revision is older than the oldest one kept. */
export class CompactedError extends StorageError {
  readonly requestedRevision: number;
  readonly compactRevision: number;
  constructor(
    requestedRevision: number,
    compactRevision: number,
  ) {
    super(`required revision ${requestedRevision} has been compacted; oldest available is ${compactRevision}`);
    this.requestedRevision = requestedRevision;
    this.compactRevision = compactRevision;
  }
}

/** A read asked for a revision the store has not reached yet. */
export class FutureRevisionError extends StorageError {
  readonly requestedRevision: number;
  readonly currentRevision: number;
  constructor(
    requestedRevision: number,
    currentRevision: number,
  ) {
    super(`revision ${requestedRevision} is newer than the current revision ${currentRevision}`);
    this.requestedRevision = requestedRevision;
    this.currentRevision = currentRevision;
  }
}

/** A watcher could not keep up with the event stream and was closed so others are not held back. */
export class WatcherTooSlowError extends StorageError {
  readonly bufferSize: number;
  constructor(bufferSize: number) {
    super(`watcher fell behind by more than ${bufferSize} events and was closed`);
    this.bufferSize = bufferSize;
  }
}

/** The backend cannot be reached (every endpoint down) or the store is closed. */
export class UnavailableError extends StorageError {}

/**
 * A write could not be committed because the disk (or the store's map) is full. Nothing of it was
 * stored; reads go on working and writes succeed again once space is freed.
 */
export class InsufficientStorageError extends StorageError {}

/**
 * A stored value that cannot be read back: its bytes cannot be transformed (decrypted) or do not
 * decode into an object. kube-apiserver calls it a corrupt object; it lists as an error and can be
 * removed only by an unsafe deletion. `detail` reads as kube's inner error (`object not decodable
 * revision=12: …`); the message as its storage error around it.
 */
export class CorruptObjectError extends StorageError {
  readonly key: string;
  readonly failure: 'untransformable' | 'undecodable';
  /** The revision of the value (0 when it could not be transformed, as kube reports it). */
  readonly revision: number;
  readonly reason: string;
  readonly detail: string;

  constructor(
    key: string,
    failure: 'untransformable' | 'undecodable',
    revision: number,
    reason: string,
  ) {
    const detail = `${failure === 'untransformable' ? 'data from the storage is not transformable' : 'object not decodable'} revision=${revision}: ${reason}`;
    super(`StorageError: corrupt object, Code: 7, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: ${detail}`);
    this.key = key;
    this.failure = failure;
    this.revision = revision;
    this.reason = reason;
    this.detail = detail;
  }
}

/**
 * Values a transforming layer (encryption at rest) could not read: it hands the stored bytes on
 * unchanged, marked here with why, so a cache keeps the key and a read reports it as corrupt
 * instead of one bad value failing every list (and the cache's start).
 */
const untransformable = new WeakMap<Uint8Array, string>();

export function markUntransformable(value: Uint8Array, reason: string): Uint8Array {
  untransformable.set(value, reason);
  return value;
}

/** Why `value` could not be transformed, when a layer marked it. */
export function untransformableReason(value: Uint8Array): string | undefined {
  return untransformable.get(value);
}
