// Dry run as a wrapper around the storage a store writes through (kube-apiserver's
// DryRunnableStorage): a dry-run write makes every read and check the write would make and
// answers as the write would, but stores nothing, so the store above it has one path for both.
//
// A dry run commits at no new revision: a create answers revision 0 (the object has no version
// yet), an update or a delete the revision of the value it found.
import type { DeleteResult, KeyValue, Storage } from './interface.ts';
import { ConflictError, KeyExistsError, KeyNotFoundError } from './errors.ts';

const NOTHING = new Uint8Array(0);

export class DryRunnableStorage {
  private readonly storage: Pick<Storage, 'get' | 'create' | 'update' | 'delete'>;
  constructor(storage: Pick<Storage, 'get' | 'create' | 'update' | 'delete'>) {
    this.storage = storage;
  }

  /** A consistent read of one key. */
  get(key: string): Promise<KeyValue | undefined> {
    return this.storage.get(key);
  }

  /**
   * Throws KeyExistsError when `key` is present, dry run or not. The value is encoded only for a
   * real write: a dry-run create answers the object, not stored bytes, so encoding it would be
   * wasted work.
   */
  create(key: string, encode: () => Uint8Array, dryRun: boolean): Promise<KeyValue> {
    return dryRun ? this.createDry(key) : this.storage.create(key, encode());
  }

  /** Compare-and-swap; throws ConflictError or KeyNotFoundError, dry run or not. */
  update(key: string, expectedModRevision: number, value: Uint8Array, dryRun: boolean): Promise<KeyValue> {
    return dryRun ? this.updateDry(key, expectedModRevision, value) : this.storage.update(key, expectedModRevision, value);
  }

  /** Throws KeyNotFoundError, or ConflictError when the key's modRevision is not the expected one. */
  delete(key: string, expectedModRevision: number | undefined, dryRun: boolean): Promise<DeleteResult> {
    return dryRun ? this.deleteDry(key, expectedModRevision) : this.storage.delete(key, expectedModRevision);
  }

  /** Nothing is stored and nothing was encoded: revision 0 and an empty value. */
  private async createDry(key: string): Promise<KeyValue> {
    if (await this.storage.get(key)) throw new KeyExistsError(key);
    return { key, value: NOTHING, createRevision: 0, modRevision: 0 };
  }

  private async updateDry(key: string, expectedModRevision: number, value: Uint8Array): Promise<KeyValue> {
    const current = await this.current(key, expectedModRevision);
    return { key, value, createRevision: current.createRevision, modRevision: current.modRevision };
  }

  private async deleteDry(key: string, expectedModRevision: number | undefined): Promise<DeleteResult> {
    const prev = await this.current(key, expectedModRevision);
    return { prev, revision: prev.modRevision };
  }

  /** The key as stored, failing as the compare-and-swap of a real write would. */
  private async current(key: string, expectedModRevision: number | undefined): Promise<KeyValue> {
    const kv = await this.storage.get(key);
    if (!kv) throw new KeyNotFoundError(key);
    if (expectedModRevision !== undefined && kv.modRevision !== expectedModRevision) throw new ConflictError(key, expectedModRevision, kv);
    return kv;
  }
}
