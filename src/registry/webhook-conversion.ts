// A CRD's webhook conversion (`spec.conversion.strategy: Webhook`), as apiextensions-apiserver
// calls it: a ConversionReview POSTed to the CRD's `clientConfig` (a URL, or a Service reference
// resolved to `https://<name>.<namespace>.svc:<port><path>`, the name its certificate must carry),
// trusting its `caBundle`, in the first review version the CRD lists that this server speaks. The
// answer is checked as kube-apiserver checks it: its uid, its result, as many objects as were sent,
// each of the desired apiVersion and the same kind, name, namespace and uid; of the metadata only
// labels and annotations are taken from it, the rest is the original's. Every failure fails the
// request with kube-apiserver's message (`conversion webhook for <gvk> failed: …`), a 500.
//
// It converts batches (a list page is one review); the codec (VersionedJson) calls it for values
// that are not at the version it serves, and the store awaits it (docs/crd.md, "Webhook conversion").
// Each conversion and each review is measured as apiextensions-apiserver measures them, through
// the recorder the server gives (ConversionWebhookMetrics).

import { randomUUID } from 'node:crypto';
import type { KObject } from '../machinery/meta.ts';
import { validateAnnotations, validateLabels } from '../machinery/meta.ts';
import { StatusError } from '../machinery/status.ts';
import { webhookClient, WebhookError, type WebhookClient, type WebhookTarget } from '../machinery/webhook-client.ts';
import type { VersionConversion } from './definition.ts';
import type { CrdObject } from './kinds/custom-resource-definition.ts';

/**
 * Where conversions are measured (the server's metrics): apiextensions-apiserver's converter
 * latency by CRD and versions, and its review counter and latency by result and failure type.
 */
export interface ConversionWebhookMetrics {
  /** One conversion of objects at `fromVersion` to `toVersion` (version names, no group), ended. */
  converted(crdName: string, fromVersion: string, toVersion: string, succeeded: boolean, seconds: number): void;
  /** One review answered and checked (`failureType` empty), or failed. */
  reviewed(failureType: ConversionFailureType | '', seconds: number): void;
}

/** kube-apiserver's kinds of a failed review (its `failure_type` label). */
export type ConversionFailureType =
  | 'conversion_webhook_call_failure'
  | 'conversion_webhook_malformed_response_failure'
  | 'conversion_webhook_partial_response_failure'
  | 'conversion_webhook_invalid_converted_object_failure';

/** A failed review: the error to throw and the kind of failure it is counted as. */
class ReviewFailure extends Error {
  readonly error: StatusError;
  readonly type: ConversionFailureType;
  constructor(error: StatusError, type: ConversionFailureType) {
    super(error.message);
    this.error = error;
    this.type = type;
  }
}

/** The version of a `group/version` (or of a bare version). */
const versionOf = (apiVersion: unknown): string => {
  const s = typeof apiVersion === 'string' ? apiVersion : '';
  return s.slice(s.indexOf('/') + 1);
};

/** The ConversionReview versions this server speaks, as kube-apiserver. */
const REVIEW_VERSIONS = new Set(['v1', 'v1beta1']);

/** kube-apiserver's conversion webhook client timeout (its webhook clients' default). */
const TIMEOUT_MS = 30_000;

/** The largest ConversionReview answer read (a list page of large objects converted). */
const MAX_ANSWER_BYTES = 64 << 20;

/** The Service port a reference without one names (the CRD's default). */
const DEFAULT_SERVICE_PORT = 443;

/**
 * A 500 with no reason: what kube-apiserver answers for an error that is not a Status (a
 * conversion error from its codec), with the error's text as the message.
 */
function conversionFailure(message: string): StatusError {
  const e = new StatusError(500, 'InternalError', message);
  delete (e.status as { reason?: string }).reason;
  return e;
}

/** Go's `schema.GroupVersionKind` string: `group/version, Kind=Kind`. */
const gvkText = (o: { apiVersion?: unknown; kind?: unknown }): string => `${String(o.apiVersion ?? '')}, Kind=${String(o.kind ?? '')}`;

interface Endpoint {
  target: WebhookTarget;
  /** The URL as client-go names it in errors (with the `timeout` parameter it adds). */
  shown: string;
}

/** Where the CRD's webhook is, or why it cannot be called. */
function endpointOf(crd: CrdObject): Endpoint | string {
  const cc = crd.spec?.conversion?.webhook?.clientConfig;
  if (!cc) return 'no webhook client configuration';
  let url: URL;
  let serverName: string | undefined;
  if (cc.url !== undefined) {
    try {
      url = new URL(cc.url);
    } catch {
      return `Unparsable URL: ${cc.url}`;
    }
  } else if (cc.service) {
    const s = cc.service;
    // kube-apiserver's service resolver: the service's DNS name, which its certificate must carry.
    serverName = `${s.name}.${s.namespace}.svc`;
    const path = s.path ?? '';
    url = new URL(`https://${serverName}:${s.port ?? DEFAULT_SERVICE_PORT}${path.startsWith('/') || path === '' ? path : `/${path}`}`);
  } else return 'no webhook client configuration';
  // client-go's REST client adds its timeout to every request.
  url.searchParams.set('timeout', `${TIMEOUT_MS / 1000}s`);
  const bundle = cc.caBundle ? Buffer.from(cc.caBundle, 'base64').toString('utf8') : '';
  const ca = bundle.trim() ? bundle : undefined;
  return { target: { url, insecureSkipTlsVerify: false, ...(ca ? { ca } : {}), ...(serverName ? { serverName } : {}) }, shown: url.href };
}

/** A failed POST in Go's net/http words (what client-go's error carries). */
function postFailure(e: unknown, shown: string): string {
  if (!(e instanceof WebhookError)) return `Post "${shown}": ${(e as Error).message}`;
  if (e.result === 'timeout' && e.status === undefined) return `Post "${shown}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`;
  if (e.status !== undefined) return httpStatusText(e.status);
  const refused = /connect ECONNREFUSED (\S+)/.exec(e.message);
  if (refused) return `Post "${shown}": dial tcp ${refused[1]}: connect: connection refused`;
  const unknownHost = /getaddrinfo (?:ENOTFOUND|EAI_AGAIN) (\S+)/.exec(e.message);
  if (unknownHost) return `Post "${shown}": dial tcp: lookup ${unknownHost[1]}: no such host`;
  if (/self[- ]signed certificate|unable to verify the first certificate|unable to get local issuer certificate/.test(e.message))
    return `Post "${shown}": tls: failed to verify certificate: x509: certificate signed by unknown authority`;
  return `Post "${shown}": ${e.message}`;
}

/** client-go's text for an unsuccessful HTTP answer without a Status body. */
function httpStatusText(code: number): string {
  switch (code) {
    case 400:
      return 'the server rejected our request for an unknown reason';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'the server could not find the requested resource';
    case 429:
      return 'the server has received too many requests and has asked us to try again later';
    case 503:
      return 'the server is currently unable to handle the request';
    case 504:
      return 'the server was unable to return a response in the time allotted, but may still be processing the request';
    default:
      return `an error on the server ("unknown") has prevented the request from succeeding`;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The review's answer, checked: the converted objects, or why the answer is refused. */
function convertedObjects(answer: unknown, reviewApiVersion: string, reviewVersion: string, uid: string): unknown[] | string {
  if (!isObject(answer)) return 'the webhook answered with a body that is not a ConversionReview';
  if (reviewVersion === 'v1') {
    const group = reviewApiVersion.slice(0, reviewApiVersion.indexOf('/'));
    if (answer.apiVersion !== reviewApiVersion || answer.kind !== 'ConversionReview')
      return `expected webhook response of ${group}/v1, Kind=ConversionReview, got ${gvkText(answer)}`;
  }
  const response = answer.response;
  if (!isObject(response)) return 'no response provided';
  // v1beta1 answers are not checked for their uid, as in kube-apiserver.
  if (reviewVersion === 'v1' && response.uid !== uid) return `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(String(response.uid ?? ''))}`;
  const result = isObject(response.result) ? response.result : {};
  if (result.status !== 'Success') {
    if (typeof result.message === 'string' && result.message) return result.message;
    return `response.result.status was '${String(result.status ?? '')}', not 'Success'`;
  }
  return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
}

/**
 * The converted object with the original's metadata, but for the labels and annotations the
 * webhook set (kube-apiserver's restoreObjectMeta); a string is why it is refused.
 */
function restoreObjectMeta(original: KObject, converted: Record<string, unknown>): string | undefined {
  const answered = converted.metadata;
  if (answered === undefined) return 'missing metadata in converted object';
  if (!isObject(answered)) return `invalid metadata of type ${goType(answered)} in converted object`;
  const meta: Record<string, unknown> = structuredClone(original.metadata ?? {}) as Record<string, unknown>;
  for (const field of ['labels', 'annotations'] as const) {
    const value = answered[field];
    if (value === undefined || value === null) {
      delete meta[field];
      continue;
    }
    if (!isObject(value)) return `invalid metadata.${field} of type ${goType(value)} in converted object`;
    const before = isObject(meta[field]) ? (meta[field] as Record<string, unknown>) : {};
    let changed = Object.keys(before).length !== Object.keys(value).length;
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'string') return `metadata.${field}[${k}] must be a string, but is ${goType(v)} in converted object`;
      if (before[k] !== v) changed = true;
    }
    if (changed) {
      const errs = field === 'labels' ? validateLabels(value, 'metadata.labels') : validateAnnotations(value, 'metadata.annotation');
      if (errs.length) return errs.length === 1 ? errs[0]!.message : `[${errs.map((e) => e.message).join(', ')}]`;
    }
    meta[field] = value;
  }
  converted.metadata = meta;
  return undefined;
}

/** The Go type a JSON value decodes to, as kube's messages name it. */
function goType(v: unknown): string {
  if (v === null) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  return 'map[string]interface {}';
}

const metaString = (o: Record<string, unknown>, f: string): string => {
  const m = o.metadata;
  const v = isObject(m) ? m[f] : undefined;
  return typeof v === 'string' ? v : '';
};

/** kube-apiserver's validateConvertedObject: what the webhook must not change; undefined when it kept them. */
function changedIdentity(original: KObject, converted: Record<string, unknown>): string | undefined {
  if (original.kind !== converted.kind) return `must have the same kind: ${original.kind} != ${String(converted.kind ?? '')}`;
  const o = original as unknown as Record<string, unknown>;
  for (const f of ['name', 'namespace', 'uid'] as const) {
    const was = metaString(o, f);
    const is = metaString(converted, f);
    if (was !== is) return `must have the same ${f === 'uid' ? 'UID' : f}: ${was} != ${is}`;
  }
  return undefined;
}

/**
 * The conversion a CRD's webhook makes. The review's group is the CRD kind's own (the CRD object's
 * apiVersion names it: `apiextensions.orch.io`, or `apiextensions.k8s.io` in the kubernetes profile).
 */
export function webhookConversion(crd: CrdObject, metrics?: ConversionWebhookMetrics): VersionConversion {
  const endpoint = endpointOf(crd);
  const reviewVersion = (crd.spec?.conversion?.webhook?.conversionReviewVersions ?? []).find((v) => REVIEW_VERSIONS.has(v));
  const crdApiVersion = typeof crd.apiVersion === 'string' && crd.apiVersion.includes('/') ? crd.apiVersion : 'apiextensions.k8s.io/v1';
  const reviewApiVersion = `${crdApiVersion.slice(0, crdApiVersion.indexOf('/'))}/${reviewVersion ?? 'v1'}`;
  let client: WebhookClient | undefined;

  const crdName = crd.metadata?.name ?? '';

  /** One review of `objects`: the converted objects, or a ReviewFailure (a StatusError before any call). */
  async function review(objects: readonly KObject[], desiredApiVersion: string): Promise<KObject[]> {
    const single = objects.length === 1;
    const gvk = gvkText(objects[0]!);
    const failed = (why: string, type: ConversionFailureType) => new ReviewFailure(conversionFailure(`conversion webhook for ${gvk} failed: ${why}`), type);
    if (!reviewVersion) throw conversionFailure('no supported conversion review versions');
    if (typeof endpoint === 'string') throw conversionFailure(`conversion webhook for ${gvk} failed: ${endpoint}`);
    client ??= webhookClient(endpoint.target, { timeoutMs: TIMEOUT_MS, attempts: 1, maxResponseBytes: MAX_ANSWER_BYTES });
    const uid = randomUUID();
    const body = { apiVersion: reviewApiVersion, kind: 'ConversionReview', request: { uid, desiredAPIVersion: desiredApiVersion, objects } };
    let answer: unknown;
    try {
      answer = await client.post(body);
    } catch (e) {
      throw failed(postFailure(e, endpoint.shown), 'conversion_webhook_call_failure');
    }
    const converted = convertedObjects(answer, reviewApiVersion, reviewVersion, uid);
    if (typeof converted === 'string') throw failed(converted, 'conversion_webhook_malformed_response_failure');
    if (converted.length !== objects.length)
      throw new ReviewFailure(conversionFailure(`conversion webhook for ${gvk} returned ${converted.length} objects, expected ${objects.length}`), 'conversion_webhook_partial_response_failure');
    return converted.map((c, i) => {
      const original = objects[i]!;
      const at = single ? 'returned invalid object at index 0' : `returned invalid converted object at index ${i}`;
      const invalid = (message: string) => new ReviewFailure(conversionFailure(message), 'conversion_webhook_invalid_converted_object_failure');
      if (!isObject(c)) throw invalid(`conversion webhook for ${gvkText(original)} ${at}: the converted object is not an object`);
      if (c.apiVersion !== desiredApiVersion) throw invalid(`conversion webhook for ${gvkText(original)} ${at}: invalid groupVersion (expected ${desiredApiVersion}, received ${String(c.apiVersion ?? '')})`);
      if (c.kind !== original.kind) throw invalid(`conversion webhook for ${gvkText(original)} ${at}: invalid kind (expected ${original.kind}, received ${String(c.kind ?? '')})`);
      const identity = changedIdentity(original, c);
      if (identity) throw invalid(`conversion webhook for ${gvkText(original)} ${single ? 'returned invalid object' : `returned invalid converted object at index ${i}`}: ${identity}`);
      const meta = restoreObjectMeta(original, c);
      if (meta) throw invalid(`conversion webhook for ${gvkText(original)} ${single ? 'returned invalid metadata' : `returned invalid metadata in object at index ${i}`}: ${meta}`);
      return c as unknown as KObject;
    });
  }

  async function convert(objects: readonly KObject[], desiredApiVersion: string): Promise<KObject[]> {
    if (objects.length === 0) return [];
    const start = performance.now();
    let succeeded = false;
    try {
      const converted = await review(objects, desiredApiVersion);
      succeeded = true;
      metrics?.reviewed('', (performance.now() - start) / 1000);
      return converted;
    } catch (e) {
      if (!(e instanceof ReviewFailure)) throw e;
      metrics?.reviewed(e.type, (performance.now() - start) / 1000);
      throw e.error;
    } finally {
      // kube-apiserver times each conversion by the version converted from; a batch here may hold
      // objects of several stored versions, each counted with the batch's time.
      if (metrics) {
        const seconds = (performance.now() - start) / 1000;
        const to = versionOf(desiredApiVersion);
        for (const from of new Set(objects.map((o) => versionOf(o.apiVersion)))) if (from !== to) metrics.converted(crdName, from, to, succeeded, seconds);
      }
    }
  }
  return { convert };
}
