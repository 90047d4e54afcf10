// Request metrics with kube-apiserver's names, labels and buckets: what every request to a served
// resource (and to discovery) was, how long it took and how it was answered; how many requests are
// in flight, and how many long-running ones (watches) are open.
//
// Labels come from the request's facts (RequestInfo), as kube's MonitorRequest makes them: the
// reported verb (GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, …), dry_run, group, version,
// resource, subresource, scope (resource, namespace, cluster, or empty for non-resource
// requests), component (apiserver) and the code. A request for a resource the server does not
// serve is not counted by resource: a client could otherwise make a series per made-up name.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
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
export function compressUsername(name: string): string {
  if (['admin', 'client', 'kube_proxy', 'kubelet', 'system:serviceaccount:kube-system:default'].includes(name)) return name;
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
 * The request metrics of one server, registered in `registry`. `served(group, version, resource)`
 * says whether a resource request names something the server serves.
 */
export function createRequestMetrics(registry: Registry, served: (group: string, version: string, resource: string) => boolean): RequestMetrics {
  const registers = [registry];
  const total = new Counter({
    name: 'apiserver_request_total',
    help: '[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    labelNames: [...LABELS, 'code'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: '[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    labelNames: LABELS,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const sizes = new Histogram({
    name: 'apiserver_response_sizes',
    help: '[STABLE] Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const,
    buckets: SIZE_BUCKETS,
    registers,
  });
  const longRunning = new Gauge({
    name: 'apiserver_longrunning_requests',
    help: '[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const,
    registers,
  });
  const inflight = new Gauge({
    name: 'apiserver_current_inflight_requests',
    help: '[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
    labelNames: ['request_kind'] as const,
    registers,
  });
  const users = new Counter({ name: 'authenticated_user_requests', help: '[ALPHA] Counter of authenticated requests broken out by username.', labelNames: ['username'] as const, registers });
  const authnAttempts = new Counter({ name: 'authentication_attempts', help: '[ALPHA] Counter of authenticated attempts.', labelNames: ['result'] as const, registers });
  const authnDuration = new Histogram({ name: 'authentication_duration_seconds', help: '[ALPHA] Authentication duration in seconds broken out by result.', labelNames: ['result'] as const, buckets: AUTH_BUCKETS, registers });
  const authzAttempts = new Counter({
    name: 'authorization_attempts_total',
    help: "[ALPHA] Counter of authorization attempts broken down by result. It can be either 'allowed', 'denied', 'no-opinion' or 'error'.",
    labelNames: ['result'] as const,
    registers,
  });
  const authzDuration = new Histogram({ name: 'authorization_duration_seconds', help: '[ALPHA] Authorization duration in seconds broken out by result.', labelNames: ['result'] as const, buckets: AUTH_BUCKETS, registers });
  inflight.set({ request_kind: 'readOnly' }, 0);
  inflight.set({ request_kind: 'mutating' }, 0);
  const withoutDryRun = (l: RequestLabels) => ({ verb: l.verb, group: l.group, version: l.version, resource: l.resource, subresource: l.subresource, scope: l.scope, component: l.component });
  // prom-client hashes a label set on every call; the series of one label set are looked up once
  // and kept (their number is bounded: served resources × verbs × scopes × dry runs × codes).
  type Series = { duration: ReturnType<typeof duration.labels>; sizes?: ReturnType<typeof sizes.labels>; byCode: Map<number, ReturnType<typeof total.labels>> };
  const series = new Map<string, Series>();
  const seriesOf = (l: RequestLabels): Series => {
    const key = `${l.verb} ${l.dry_run} ${l.group} ${l.version} ${l.resource} ${l.subresource} ${l.scope}`;
    let s = series.get(key);
    if (!s) {
      s = { duration: duration.labels(l), ...((l.verb === 'GET' || l.verb === 'LIST') && { sizes: sizes.labels(withoutDryRun(l)) }), byCode: new Map() };
      series.set(key, s);
    }
    return s;
  };
  return {
    labels(method, info, query, contentType) {
      if (info.isResourceRequest ? !served(info.apiGroup, info.apiVersion, info.resource) : !info.apiPrefix) return undefined;
      const dryRun = query.getAll('dryRun');
      return {
        verb: reportedVerb(method, info, contentType),
        // kube's cleanDryRun: `All` when asked for, "invalid" for any other value (one series, whatever was sent).
        dry_run: dryRun.length === 0 ? '' : dryRun.every((v) => v === 'All') ? 'All' : 'invalid',
        group: info.apiGroup,
        version: info.apiVersion,
        resource: info.resource,
        subresource: info.subresource,
        scope: scopeOf(info),
        component: COMPONENT,
      };
    },
    observe(labels, code, seconds, bytes) {
      const s = seriesOf(labels);
      let counter = s.byCode.get(code);
      if (!counter) s.byCode.set(code, (counter = total.labels({ ...labels, code: String(code) })));
      counter.inc();
      s.duration.observe(seconds);
      s.sizes?.observe(bytes);
    },
    longRunning(labels) {
      const l = withoutDryRun(labels);
      longRunning.inc(l);
      let open = true;
      return () => {
        if (open) longRunning.dec(l);
        open = false;
      };
    },
    inflight(kind, count) {
      inflight.set({ request_kind: kind }, count);
    },
    authenticated(result, seconds, username) {
      authnAttempts.inc({ result });
      authnDuration.observe({ result }, seconds);
      if (username !== undefined) users.inc({ username: compressUsername(username) });
    },
    authorized(result, seconds) {
      authzAttempts.inc({ result });
      authzDuration.observe({ result }, seconds);
    },
  };
}
