// Request metrics with kube-apiserver's names, labels and buckets: what every request to a served
// resource (and to discovery) was, how long it took and how it was answered; how many requests are
// in flight, and how many long-running ones (watches) are open.
//
// Labels come from the request's facts (RequestInfo), as kube's MonitorRequest makes them: the
// reported verb (GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, …), dry_run, group, version,
// resource, subresource, scope (resource, namespace, cluster, or empty for non-resource
// requests), component (apiserver) and the code. A request for a resource the server does not
// serve is not counted by resource: a client could otherwise make a series per made-up name.

import type { LabelValues, MetricObjectWithValues, MetricType, MetricValueWithName } from 'prom-client';
import { Counter, Gauge, Histogram, type Registry } from './prom.ts';
import type { RequestInfo } from '../request/request-info.ts';

/** kube-apiserver's buckets for apiserver_request_duration_seconds. */
const DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** kube-apiserver's buckets for apiserver_response_sizes (1 KB to 1 GB, times 10). */
const SIZE_BUCKETS = [1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000];

const COMPONENT = 'apiserver';
const LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;

/** What one request is labelled with, once it is known to be counted. */
export interface RequestLabels {
  verb: string;
  dry_run: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  component: string;
}

export interface RequestMetrics {
  /** The labels of a request, or undefined when it is not counted (an unserved resource, a non-API path). */
  labels(method: string, info: RequestInfo, query: URLSearchParams, contentType: string | undefined): RequestLabels | undefined;
  /** A request is answered: its code, how long it took, and (reads) the size of its answer. */
  observe(labels: RequestLabels, code: number, seconds: number, bytes: number): void;
  /** A long-running request (a watch) opens; the returned function closes it. */
  longRunning(labels: RequestLabels): () => void;
  /** The requests in flight of one kind changed (`readOnly`, `mutating`). */
  inflight(kind: 'readOnly' | 'mutating', count: number): void;
  /** A request was authenticated (`success`, with the user's name), refused (`failure`) or failed (`error`). */
  authenticated(result: 'success' | 'failure' | 'error', seconds: number, username?: string): void;
  /** A request was authorized: the chain's answer (`allowed`, `denied`, `no-opinion`) or `error`. */
  authorized(result: 'allowed' | 'denied' | 'no-opinion' | 'error', seconds: number): void;
}

/** kube's compressUsername: a few known identities by name, e-mail addresses as one, everyone else as `other`. */
const KNOWN_USERNAMES: ReadonlySet<string> = new Set(['admin', 'client', 'kube_proxy', 'kubelet', 'system:serviceaccount:kube-system:default']);

export function compressUsername(name: string): string {
  if (KNOWN_USERNAMES.has(name)) return name;
  if (name.includes('@')) return 'email_id';
  return 'other';
}

/** kube's ExponentialBuckets(0.001, 2, 15): 1 ms to about 16 s. */
const AUTH_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);

/** kube's CanonicalVerb and cleanVerb: the verb as the metrics report it. */
export function reportedVerb(method: string, info: RequestInfo, contentType: string | undefined): string {
  const m = method.toUpperCase();
  if (info.verb === 'watch') return 'WATCH';
  if (m === 'GET' || m === 'HEAD') return info.isResourceRequest && !info.name ? 'LIST' : 'GET';
  if (m === 'PATCH' && contentType !== undefined && contentType.split(';')[0]!.trim().toLowerCase() === 'application/apply-patch+yaml') return 'APPLY';
  if (m === 'PATCH' && contentType !== undefined && contentType.split(';')[0]!.trim().toLowerCase() === 'application/apply-patch+cbor') return 'APPLY';
  if (['POST', 'PUT', 'PATCH', 'DELETE', 'CONNECT', 'OPTIONS'].includes(m)) return m;
  // A method kube has no name for is one series, not one per spelling.
  return 'other';
}

/** kube's scope label: a named object, a namespace, the cluster; nothing for non-resource requests. */
function scopeOf(info: RequestInfo): string {
  if (!info.isResourceRequest) return '';
  if (info.name) return 'resource';
  if (info.namespace) return 'namespace';
  return 'cluster';
}

/**
 * A histogram whose series are cells held by the caller: observing is a bucket search and three
 * additions, no label hashing (prom-client hashes the label set on every call, even through a
 * child). prom-client reads the cells at scrape time, and writes them exactly as its own.
 */
class CellHistogram<T extends string> extends Histogram<T> {
  private readonly cells: HistogramCell[] = [];
  private readonly bounds: readonly number[];
  private readonly metricName: string;
  private readonly metricHelp: string;
  /** prom-client's own type field (its typings declare it an enum the module does not export). */
  private readonly metricType = (this as unknown as { type: MetricType }).type;
  constructor(config: { name: string; help: string; labelNames: readonly T[]; buckets: number[]; registers: Registry[] }) {
    super(config);
    this.metricName = config.name;
    this.metricHelp = config.help;
    this.bounds = [...config.buckets].sort((a, b) => a - b);
  }
  /** The series of one label set (ask once per label set and keep it). */
  cell(labels: Record<string, string>): HistogramCell {
    const c = new HistogramCell(labels, this.bounds);
    this.cells.push(c);
    return c;
  }
  override reset(): void {
    // prom-client's constructor resets before this class's fields exist.
    this.cells?.forEach((c) => c.clear());
  }
  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<T>>> {
    const data = await this.getForPromString();
    return { ...data, values: data.values.map(({ sharedLabels, ...v }) => ({ ...v, labels: { ...sharedLabels, ...v.labels } })) };
  }
  /** What the registry writes: the bucket rows carry `le` first, then the series' labels (as prom-client's). */
  async getForPromString(): Promise<MetricObjectWithValues<SharedRow<T>>> {
    const bucket = `${this.metricName}_bucket`;
    const values: SharedRow<T>[] = [];
    for (const c of this.cells) {
      if (!c.used) continue;
      const sharedLabels = c.labels;
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += c.buckets[i]!;
        values.push({ labels: { le } as LabelValues<T>, sharedLabels, value: acc, metricName: bucket });
      });
      values.push({ labels: { le: '+Inf' } as LabelValues<T>, sharedLabels, value: c.count, metricName: bucket });
      values.push({ labels: {}, sharedLabels, value: c.sum, metricName: `${this.metricName}_sum` });
      values.push({ labels: {}, sharedLabels, value: c.count, metricName: `${this.metricName}_count` });
    }
    return { name: this.metricName, help: this.metricHelp, type: this.metricType, values, aggregator: 'sum', collect: () => undefined };
  }
}

type SharedRow<T extends string> = MetricValueWithName<T> & { sharedLabels: Record<string, string> };

class HistogramCell {
  readonly labels: Record<string, string>;
  private readonly bounds: readonly number[];
  readonly buckets: Float64Array;
  sum = 0;
  count = 0;
  /** Observed since the last reset (a series appears with its first observation, as prom-client's). */
  used = false;
  constructor(
    labels: Record<string, string>,
    bounds: readonly number[],
  ) {
    this.labels = labels;
    this.bounds = bounds;
    this.buckets = new Float64Array(bounds.length);
  }
  observe(v: number): void {
    if (!Number.isFinite(v)) return;
    const b = this.bounds;
    for (let i = 0; i < b.length; i++)
      if (v <= b[i]!) {
        this.buckets[i]!++;
        break;
      }
    this.sum += v;
    this.count++;
    this.used = true;
  }
  clear(): void {
    this.buckets.fill(0);
    this.sum = 0;
    this.count = 0;
    this.used = false;
  }
}

/** A counter cell: prom-client's counter is filled from these at scrape time. */
interface CounterCell {
  labels: Record<string, string>;
  value: number;
}

/** Counts held in cells, copied into `counter` when it is scraped. */
function cellCounter<T extends string>(config: { name: string; help: string; labelNames: readonly T[]; registers: Registry[] }): { cell(labels: Record<T, string>): CounterCell } {
  const cells: CounterCell[] = [];
  new Counter<T>({
    ...config,
    collect() {
      this.reset();
      for (const c of cells) if (c.value > 0) this.inc(c.labels as Partial<Record<T, string>>, c.value);
    },
  });
  return {
    cell(labels) {
      const c = { labels, value: 0 };
      cells.push(c);
      return c;
    },
  };
}

/** The series of one request label set: every cell a request of it touches, found once. */
interface Series {
  labels: RequestLabels;
  duration: HistogramCell;
  sizes?: HistogramCell;
  byCode: Map<number, CounterCell>;
  longRunning?: { labels: Record<string, string>; value: number };
}

/**
 * The request metrics of one server, registered in `registry`. `served(group, version, resource)`
 * says whether a resource request names something the server serves.
 *
 * Recording a request costs a map lookup and a few additions: every series is a cell of this
 * module's (found once per label set, whose number is bounded: served resources × verbs × scopes ×
 * dry runs × codes), and prom-client reads the cells only when /metrics is scraped.
 */
export function createRequestMetrics(registry: Registry, served: (group: string, version: string, resource: string) => boolean): RequestMetrics {
  const registers = [registry];
  const total = cellCounter({
    name: 'apiserver_request_total',
    help: '[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    labelNames: [...LABELS, 'code'] as const,
    registers,
  });
  const duration = new CellHistogram({
    name: 'apiserver_request_duration_seconds',
    help: '[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    labelNames: LABELS,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const sizes = new CellHistogram({
    name: 'apiserver_response_sizes',
    help: '[STABLE] Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const,
    buckets: SIZE_BUCKETS,
    registers,
  });
  const longRunningCells: { labels: Record<string, string>; value: number }[] = [];
  new Gauge({
    name: 'apiserver_longrunning_requests',
    help: '[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const,
    registers,
    collect() {
      for (const c of longRunningCells) this.set(c.labels, c.value);
    },
  });
  const inflightNow = { readOnly: 0, mutating: 0 };
  new Gauge({
    name: 'apiserver_current_inflight_requests',
    help: '[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
    labelNames: ['request_kind'] as const,
    registers,
    collect() {
      this.set({ request_kind: 'readOnly' }, inflightNow.readOnly);
      this.set({ request_kind: 'mutating' }, inflightNow.mutating);
    },
  });
  const users = cellCounter({ name: 'authenticated_user_requests', help: '[ALPHA] Counter of authenticated requests broken out by username.', labelNames: ['username'] as const, registers });
  const authnAttempts = cellCounter({ name: 'authentication_attempts', help: '[ALPHA] Counter of authenticated attempts.', labelNames: ['result'] as const, registers });
  const authnDuration = new CellHistogram({ name: 'authentication_duration_seconds', help: '[ALPHA] Authentication duration in seconds broken out by result.', labelNames: ['result'] as const, buckets: AUTH_BUCKETS, registers });
  const authzAttempts = cellCounter({
    name: 'authorization_attempts_total',
    help: "[ALPHA] Counter of authorization attempts broken down by result. It can be either 'allowed', 'denied', 'no-opinion' or 'error'.",
    labelNames: ['result'] as const,
    registers,
  });
  const authzDuration = new CellHistogram({ name: 'authorization_duration_seconds', help: '[ALPHA] Authorization duration in seconds broken out by result.', labelNames: ['result'] as const, buckets: AUTH_BUCKETS, registers });
  // The cells of each result and user, made when first used (a series appears with its first count).
  const byResult = <R extends string>(attempts: { cell(labels: Record<'result', string>): CounterCell }, durations: CellHistogram<'result'>) => {
    const cells = new Map<R, { attempts: CounterCell; duration: HistogramCell }>();
    return (result: R) => {
      let c = cells.get(result);
      if (!c) cells.set(result, (c = { attempts: attempts.cell({ result }), duration: durations.cell({ result }) }));
      return c;
    };
  };
  const authnCells = byResult<'success' | 'failure' | 'error'>(authnAttempts, authnDuration);
  const authzCells = byResult<'allowed' | 'denied' | 'no-opinion' | 'error'>(authzAttempts, authzDuration);
  const userCells = new Map<string, CounterCell>();
  const withoutDryRun = (l: RequestLabels) => ({ verb: l.verb, group: l.group, version: l.version, resource: l.resource, subresource: l.subresource, scope: l.scope, component: l.component });
  const series = new Map<string, Series>();
  const seriesOf = (key: string, l: RequestLabels): Series => {
    let s = series.get(key);
    if (!s) {
      s = { labels: l, duration: duration.cell({ ...l }), ...((l.verb === 'GET' || l.verb === 'LIST') && { sizes: sizes.cell(withoutDryRun(l)) }), byCode: new Map() };
      series.set(key, s);
    }
    return s;
  };
  /** The series a label set returned by `labels` belongs to. */
  const ofLabels = new WeakMap<RequestLabels, Series>();
  const seriesOfLabels = (l: RequestLabels): Series => {
    let s = ofLabels.get(l);
    if (!s) {
      s = seriesOf(`${l.verb} ${l.dry_run} ${l.group} ${l.version} ${l.resource} ${l.subresource} ${l.scope}`, l);
      ofLabels.set(l, s);
    }
    return s;
  };
  return {
    labels(method, info, query, contentType) {
      if (info.isResourceRequest ? !served(info.apiGroup, info.apiVersion, info.resource) : !info.apiPrefix) return undefined;
      const dryRuns = query.size === 0 ? undefined : query.getAll('dryRun');
      // kube's cleanDryRun: `All` when asked for, "invalid" for any other value (one series, whatever was sent).
      const dryRun = !dryRuns || dryRuns.length === 0 ? '' : dryRuns.every((v) => v === 'All') ? 'All' : 'invalid';
      const verb = reportedVerb(method, info, contentType);
      const scope = scopeOf(info);
      const key = `${verb} ${dryRun} ${info.apiGroup} ${info.apiVersion} ${info.resource} ${info.subresource} ${scope}`;
      const known = series.get(key);
      if (known) return known.labels;
      const l: RequestLabels = { verb, dry_run: dryRun, group: info.apiGroup, version: info.apiVersion, resource: info.resource, subresource: info.subresource, scope, component: COMPONENT };
      ofLabels.set(l, seriesOf(key, l));
      return l;
    },
    observe(labels, code, seconds, bytes) {
      const s = seriesOfLabels(labels);
      let counter = s.byCode.get(code);
      if (!counter) s.byCode.set(code, (counter = total.cell({ ...labels, code: String(code) })));
      counter.value++;
      s.duration.observe(seconds);
      s.sizes?.observe(bytes);
    },
    longRunning(labels) {
      const s = seriesOfLabels(labels);
      if (!s.longRunning) longRunningCells.push((s.longRunning = { labels: withoutDryRun(labels), value: 0 }));
      const cell = s.longRunning;
      cell.value++;
      let open = true;
      return () => {
        if (open) cell.value--;
        open = false;
      };
    },
    inflight(kind, count) {
      inflightNow[kind] = count;
    },
    authenticated(result, seconds, username) {
      const c = authnCells(result);
      c.attempts.value++;
      c.duration.observe(seconds);
      if (username !== undefined) {
        const name = compressUsername(username);
        let u = userCells.get(name);
        if (!u) userCells.set(name, (u = users.cell({ username: name })));
        u.value++;
      }
    },
    authorized(result, seconds) {
      const c = authzCells(result);
      c.attempts.value++;
      c.duration.observe(seconds);
    },
  };
}
