// Compaction coordinated through a bookkeeping key, as kube-apiserver does (same key name, same
// format: the decimal revision), so several API servers sharing one etcd — ours or Kubernetes' —
// compact once per interval between them instead of once each.
//
// The key's *version* (how often it was written) is the coordination token: a writer only wins if
// the version it last saw is still current. Its *value* is the last revision compacted to, which is
// how we learn the compact revision: etcd's "required revision has been compacted" error omits it.
import { FutureRevisionError } from '../errors.ts';
import { isServiceError, type EndpointPool } from './endpoints.ts';
import { CompareResult, CompareTarget, type TxnResponse } from './proto.ts';

export const COMPACT_KEY = 'compact_rev_key';
const KEY = Buffer.from(COMPACT_KEY);

/** Physical compaction of a large store can take a while; it is not an interactive request. */
const COMPACT_TIMEOUT_MS = 60_000;

interface CompactKeyState {
  /** How many times the key was written (0: never). */
  version: number;
  /** The revision recorded by the last compaction (0: none). */
  revision: number;
  /** Header revision of the read. */
  current: number;
}

export async function readCompactKey(pool: EndpointPool): Promise<CompactKeyState> {
  const res = await pool.range({ key: KEY });
  const kv = res.kvs[0];
  return { version: kv?.version ?? 0, revision: kv ? Number(kv.value.toString()) || 0 : 0, current: res.header.revision };
}

/** Record `revision` in the key if its version is still `expectedVersion`. */
async function claim(pool: EndpointPool, expectedVersion: number, revision: number): Promise<TxnResponse> {
  return pool.txn({
    compare: [{ result: CompareResult.EQUAL, target: CompareTarget.VERSION, key: KEY, version: expectedVersion }],
    success: [{ request_put: { key: KEY, value: Buffer.from(String(revision)) } }],
    failure: [{ request_range: { key: KEY } }],
  });
}

async function physicalCompact(pool: EndpointPool, revision: number): Promise<void> {
  try {
    await pool.compact({ revision, physical: true }, Math.max(pool.requestTimeoutMs, COMPACT_TIMEOUT_MS));
  } catch (err) {
    // Someone (another server, etcdctl, etcd's own auto-compaction) already went at least this far.
    if (!(isServiceError(err) && /has been compacted/.test(err.details))) throw err;
  }
}

/** Explicit compaction to `revision`; a no-op when the store is already compacted that far. */
export async function compactTo(pool: EndpointPool, revision: number): Promise<void> {
  for (;;) {
    const state = await readCompactKey(pool);
    if (revision > state.current) throw new FutureRevisionError(revision, state.current);
    if (state.revision >= revision) return;
    const res = await claim(pool, state.version, revision);
    if (res.succeeded) return physicalCompact(pool, revision);
    // Another server moved the key between our read and our write: look again.
  }
}

/**
 * One step of kube-apiserver's compactor loop. `version`/`revision` are what the previous step
 * returned: the key version it saw and the store revision at that time. The winner compacts to the
 * revision observed one interval ago, so watchers always have at least one interval of history.
 */
export async function compactStep(pool: EndpointPool, version: number, revision: number): Promise<{ version: number; revision: number }> {
  const res = await claim(pool, version, revision);
  const current = res.header.revision;
  if (!res.succeeded) {
    // Lost to another server (or an explicit compact): adopt its version and try next interval.
    const kv = res.responses[0]?.response_range?.kvs[0];
    return { version: kv?.version ?? 0, revision: current };
  }
  // The first successful step only records a starting point (revision 0), as Kubernetes does.
  if (revision > 0) await physicalCompact(pool, revision);
  return { version: version + 1, revision: current };
}
