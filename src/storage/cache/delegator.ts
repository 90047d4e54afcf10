// Where a store's reads are served (kube-apiserver's cacher delegator): from the watch cache's
// memory when the resourceVersion semantics allow it, at an exact revision from the backend's
// history, and consistent reads as the cache decides. A list page is filled here too, reading on
// through the range while a filter (label and field selectors) drops items.
//
// It speaks keys and revisions: the store parses resourceVersions, decodes continue tokens and
// builds the filter, and turns what this throws (FutureRevisionError, CompactedError) into Status.
import type { KeyValue, ListResult, Watch, WatchHandler } from '../interface.ts';
import { FutureRevisionError } from '../errors.ts';
import type { WatchCache } from './watch-cache.ts';

export interface DelegatedListOptions {
  /** The parsed resourceVersion: absent, the most recent state (a consistent read); 0, any. */
  resourceVersion?: number;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  /** At most this many items (0: no limit). */
  limit: number;
  /** Where a continue token resumes: the first page's revision and the first key to read. */
  continueFrom?: { revision: number; key: string };
  /** Read this one key instead of the range (a field selector naming one object). */
  onlyKey?: string;
  /** Which items the list keeps; absent: every item. */
  filter?: (kv: KeyValue) => boolean;
}

export interface DelegatedList {
  items: KeyValue[];
  /** The revision every item is as of. */
  revision: number;
  /** Set when items remain: the last key this page looked at, after which the next one starts. */
  continueAfter?: string;
  /** How many keys remain after the page (meaningful without a filter). */
  remaining: number;
}

/** Items fetched per read while filling a page through a filter. */
const FILTERED_PAGE = 500;

type Freshness = { kind: 'recent' } | { kind: 'any' } | { kind: 'notOlder'; rv: number } | { kind: 'exact'; rv: number };

export class CacheDelegator {
  private readonly cache: WatchCache;
  constructor(cache: WatchCache) {
    this.cache = cache;
  }

  /** The cache's revision: what a cached read reflects. */
  get revision(): number {
    return this.cache.revision;
  }

  /** One key from memory with no freshness wait, or undefined when the cache does not hold it. */
  getCached(key: string): KeyValue | undefined {
    return this.cache.getCached(key);
  }

  /**
   * One key at a resourceVersion's semantics: absent, a consistent read; 0, whatever the cache
   * holds; otherwise not older than it (the cache once it has caught up, else the backend).
   */
  async get(key: string, resourceVersion?: number): Promise<KeyValue | undefined> {
    if (resourceVersion === undefined) return this.cache.get(key);
    if (resourceVersion > 0) await this.waitNotOlderThan(resourceVersion);
    return this.cache.getCached(key) ?? (resourceVersion === 0 ? undefined : this.cache.get(key));
  }

  /** Throws FutureRevisionError when the cache does not reach `rv` within its freshness timeout. */
  async waitNotOlderThan(rv: number): Promise<void> {
    if (!(await this.cache.waitForRevision(rv))) throw new FutureRevisionError(rv, this.cache.revision);
  }

  /** One page of the keys under `prefix` that the filter keeps. */
  async list(prefix: string, opts: DelegatedListOptions): Promise<DelegatedList> {
    const { limit, filter, onlyKey } = opts;
    const freshness = this.freshness(opts);
    const pageLimit = onlyKey ? 1 : filter ? Math.max(limit, FILTERED_PAGE) : limit;
    let page = await this.read(prefix, freshness, onlyKey ?? opts.continueFrom?.key ?? prefix, pageLimit);
    const revision = freshness.kind === 'exact' ? freshness.rv : page.revision;
    const items: KeyValue[] = [];
    let lastKey: string | undefined;
    let more = false;
    let remaining = 0;
    for (;;) {
      let stoppedEarly = false;
      for (const kv of page.items) {
        if (onlyKey && kv.key !== onlyKey) break;
        if (!filter || filter(kv)) {
          if (limit > 0 && items.length === limit) {
            stoppedEarly = true;
            break;
          }
          items.push(kv);
        }
        lastKey = kv.key;
      }
      if (onlyKey) break;
      if (stoppedEarly) {
        more = true;
        break;
      }
      if (!page.more) break;
      if (limit > 0 && items.length === limit) {
        more = true;
        remaining = page.remaining;
        break;
      }
      page = await this.cache.list(prefix, { atRevision: revision, limit: pageLimit, startKey: `${lastKey}\0` });
    }
    return { items, revision, continueAfter: more ? lastKey : undefined, remaining };
  }

  /**
   * What a list's resourceVersion asks for: a continued list reads the first page's revision; a
   * limit without resourceVersionMatch makes a resourceVersion exact, as kube-apiserver does.
   */
  private freshness(opts: DelegatedListOptions): Freshness {
    if (opts.continueFrom) return { kind: 'exact', rv: opts.continueFrom.revision };
    const rv = opts.resourceVersion;
    if (rv === undefined) return { kind: 'recent' };
    if (rv === 0) return { kind: 'any' };
    if (opts.resourceVersionMatch === 'Exact' || (!opts.resourceVersionMatch && opts.limit > 0)) return { kind: 'exact', rv };
    return { kind: 'notOlder', rv };
  }

  /** The first read of a list: recent and exact reads as the cache decides, the others from memory. */
  private async read(prefix: string, freshness: Freshness, startKey: string, limit: number): Promise<ListResult> {
    switch (freshness.kind) {
      case 'recent':
        return this.cache.list(prefix, { limit, startKey });
      case 'any':
        return this.cache.listCached(prefix, { limit, startKey });
      case 'notOlder':
        await this.waitNotOlderThan(freshness.rv);
        return this.cache.listCached(prefix, { limit, startKey });
      case 'exact':
        return this.cache.list(prefix, { atRevision: freshness.rv, limit, startKey });
    }
  }

  watch(prefix: string, afterRevision: number, handler: WatchHandler): Watch {
    return this.cache.watch(prefix, afterRevision, handler);
  }

  /** Ask every watch for a progress notification (bookmarks). */
  requestProgress(): void {
    this.cache.requestProgress();
  }
}
