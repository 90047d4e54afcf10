// One gRPC channel per etcd endpoint plus the failover policy shared by unary calls and the watch
// stream: a single "current" endpoint is used until it fails at the transport level, then the next
// one is tried. All etcd members serve linearizable reads and forward writes to the leader, so any
// healthy member is as good as another.
import * as grpc from '@grpc/grpc-js';
import { UnavailableError } from '../errors.ts';
import {
  etcdServices,
  type CompactionRequest,
  type CompactionResponse,
  type KVClient,
  type MaintenanceClient,
  type PutRequest,
  type PutResponse,
  type RangeRequest,
  type RangeResponse,
  type ResponseHeader,
  type TxnRequest,
  type TxnResponse,
  type WatchClient,
} from './proto.ts';

const CHANNEL_OPTIONS: grpc.ClientOptions = {
  // Large lists come back in one RangeResponse; gRPC's 4 MiB default would fail them.
  'grpc.max_receive_message_length': 256 * 1024 * 1024,
  'grpc.max_send_message_length': 256 * 1024 * 1024,
  // Detect half-dead TCP connections (partition, frozen member) on long-lived watch streams. etcd's
  // default enforcement (min 5 s, no pings without streams) rejects more aggressive settings.
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  // grpc-js backs off up to 120 s between reconnects by default; a member that comes back after a
  // restart should be usable again within seconds.
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 2_000,
};

/** Upper bound for one attempt on a channel that is not connected yet: a black-holed address must not eat the whole request deadline. */
const CONNECT_ATTEMPT_MS = 2_000;

export class Endpoint {
  readonly url: string;
  readonly kv: KVClient;
  readonly watch: WatchClient;
  readonly maintenance: MaintenanceClient;
  /** This member's etcd version, once a Status call has told us. */
  version?: string;

  constructor(url: string) {
    this.url = url;
    const { target, creds } = parseEndpoint(url);
    const svc = etcdServices();
    this.kv = new svc.KV(target, creds, CHANNEL_OPTIONS);
    // Share the KV client's channel: one TCP connection per member, as etcd's own client does.
    const shared = { ...CHANNEL_OPTIONS, channelOverride: this.kv.getChannel() };
    this.watch = new svc.Watch(target, creds, shared);
    this.maintenance = new svc.Maintenance(target, creds, shared);
  }

  connected(): boolean {
    return this.kv.getChannel().getConnectivityState(true) === grpc.connectivityState.READY;
  }

  /** Learn the member's version (no failover: the answer is about this member). */
  probeVersion(timeoutMs: number): Promise<string | undefined> {
    return new Promise((resolve) => {
      this.maintenance.Status({}, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (!err && res) this.version = res.version;
        resolve(this.version);
      });
    });
  }

  close(): void {
    this.kv.close();
  }
}

/**
 * Whether this etcd answers WatchProgressRequest in order with the events it has yet to send.
 * Older releases may send the progress notification first (etcd-io/etcd#15220); Kubernetes only
 * relies on it from 3.4.31 / 3.5.13 on, and so do we.
 */
export function progressRequestIsOrdered(version: string | undefined): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version ?? '');
  if (!m) return false;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 3) return major > 3;
  if (minor === 4) return patch >= 31;
  if (minor === 5) return patch >= 13;
  return minor > 5;
}

/** kube-apiserver style `http://host:port` (or `https://`, or bare `host:port`) → gRPC target. */
function parseEndpoint(url: string): { target: string; creds: grpc.ChannelCredentials } {
  if (!url.includes('://')) return { target: url, creds: grpc.credentials.createInsecure() };
  const u = new URL(url);
  const port = u.port || (u.protocol === 'https:' ? '443' : '2379');
  const creds = u.protocol === 'https:' ? grpc.credentials.createSsl() : grpc.credentials.createInsecure();
  return { target: `${u.hostname}:${port}`, creds };
}

export function isServiceError(err: unknown): err is grpc.ServiceError {
  return err instanceof Error && typeof (err as Partial<grpc.ServiceError>).code === 'number';
}

/**
 * Errors after which another member may succeed. UNAVAILABLE covers connection failures and etcd's
 * own transient errors (no leader, leader changed, request timed out, member stopping).
 */
function isTransient(err: grpc.ServiceError): boolean {
  return err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.DEADLINE_EXCEEDED;
}

type UnaryInvoker<Res> = (ep: Endpoint, deadline: Date, callback: (err: grpc.ServiceError | null, res?: Res) => void) => void;

export class EndpointPool {
  readonly requestTimeoutMs: number;
  readonly endpoints: Endpoint[];
  private currentIndex = 0;
  private closed = false;
  /**
   * The highest store revision any response has shown us. A "from now" watch starts right after it,
   * so it cannot miss a write this client saw acknowledged before calling watch(), however long the
   * watch stream then takes to be (re-)established.
   */
  observedRevision = 0;

  constructor(
    urls: string[],
    requestTimeoutMs: number,
  ) {
    this.requestTimeoutMs = requestTimeoutMs;
    if (urls.length === 0) throw new Error('etcd storage needs at least one endpoint');
    this.endpoints = urls.map((u) => new Endpoint(u));
  }

  get current(): Endpoint {
    return this.endpoints[this.currentIndex];
  }

  /** Move past `failed` unless someone else already did (concurrent failures must not skip a healthy member). */
  rotateFrom(failed: Endpoint): void {
    if (this.current === failed) this.currentIndex = (this.currentIndex + 1) % this.endpoints.length;
  }

  /**
   * Run a unary call with failover. Writes are retried too: every write this backend issues is a
   * compare-guarded Txn, so a write that did commit before its connection died cannot apply twice;
   * the retry then reports KeyExistsError / ConflictError / KeyNotFoundError for our own write.
   */
  async unary<Res extends { header?: ResponseHeader | null }>(
    what: string,
    invoke: UnaryInvoker<Res>,
    timeoutMs = this.requestTimeoutMs,
  ): Promise<Res> {
    const deadline = Date.now() + timeoutMs;
    let lastError = 'no attempt made';
    let failuresInRound = 0;
    let backoff = 50;
    for (;;) {
      if (this.closed) throw new UnavailableError('etcd storage is closed');
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new UnavailableError(`etcd ${what} failed within ${timeoutMs} ms on [${this.urls()}]: ${lastError}`);
      }
      const ep = this.current;
      const attemptMs = ep.connected() ? remaining : Math.min(remaining, CONNECT_ATTEMPT_MS);
      try {
        const res = await new Promise<Res>((resolve, reject) =>
          invoke(ep, new Date(Date.now() + attemptMs), (err, r) => (err ? reject(err) : resolve(r as Res))),
        );
        this.observe(res.header?.revision ?? 0);
        return res;
      } catch (err) {
        // close() cancels what is in flight; report that as what it is, not as a gRPC oddity.
        if (this.closed) throw new UnavailableError('etcd storage is closed');
        if (!isServiceError(err) || !isTransient(err)) throw err;
        lastError = `${ep.url}: ${err.details || err.message}`;
        // A deadline on a connected channel means the member accepted the request but was slow; try
        // it again only while time remains. Anything else is the member's fault: try the next one.
        if (err.code !== grpc.status.DEADLINE_EXCEEDED || !ep.connected()) this.rotateFrom(ep);
        if (++failuresInRound >= this.endpoints.length) {
          // Every member failed once: pause so a leader election or restart can finish.
          failuresInRound = 0;
          await sleep(Math.min(backoff, Math.max(0, deadline - Date.now())));
          backoff = Math.min(backoff * 2, 1_000);
        }
      }
    }
  }

  observe(revision: number): void {
    if (revision > this.observedRevision) this.observedRevision = revision;
  }

  range(req: RangeRequest, timeoutMs?: number): Promise<RangeResponse> {
    return this.unary('range', (ep, deadline, cb) => ep.kv.Range(req, new grpc.Metadata(), { deadline }, cb), timeoutMs);
  }

  /** An unconditional put; the backend never issues one (writes are compare-guarded Txns), the benchmark's baseline does. */
  put(req: PutRequest): Promise<PutResponse> {
    return this.unary('put', (ep, deadline, cb) => ep.kv.Put(req, new grpc.Metadata(), { deadline }, cb));
  }

  txn(req: TxnRequest): Promise<TxnResponse> {
    return this.unary('txn', (ep, deadline, cb) => ep.kv.Txn(req, new grpc.Metadata(), { deadline }, cb));
  }

  compact(req: CompactionRequest, timeoutMs?: number): Promise<CompactionResponse> {
    return this.unary('compact', (ep, deadline, cb) => ep.kv.Compact(req, new grpc.Metadata(), { deadline }, cb), timeoutMs);
  }

  urls(): string {
    return this.endpoints.map((e) => e.url).join(', ');
  }

  close(): void {
    this.closed = true;
    for (const ep of this.endpoints) ep.close();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
