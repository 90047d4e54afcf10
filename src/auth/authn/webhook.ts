// Webhook token authentication (`--authentication-token-webhook-*`): a bearer token is sent to a
// remote service as a TokenReview (`<authentication group>/v1` or `v1beta1`, `spec.token` and
// `spec.audiences`), which answers whom it authenticates. As kube-apiserver:
// - the answer must be a TokenReview of the version sent;
// - audiences: a request for some audiences is authenticated for those of them the review names
//   in `status.audiences`, or, when it names none, for those the server itself answers to (its
//   implicit audiences); no audience in common means the token is not this authenticator's;
// - a failed review with `status.error` is a rejection with that message; without one, the token
//   is simply not known;
// - answers are cached for the TTL (success and failure alike), keyed by a hash of the audiences
//   and the token; a call that fails (the service unreachable, an HTTP error, an answer that is no
//   TokenReview) and a failure with `status.error` are never cached, so the next request asks
//   again. Concurrent requests with the same token share one call.
// The token is never logged nor put in a message.

import { createHash } from 'node:crypto';
import type { UserInfo } from '../../request/user.ts';
import type { WebhookClient } from '../../machinery/webhook-client.ts';
import type { AuthenticationResult } from './authenticator.ts';
import { intersect, type TokenAuthenticator } from './bearer-token.ts';

export const WEBHOOK_VERSIONS = ['v1', 'v1beta1'] as const;
export type WebhookVersion = (typeof WEBHOOK_VERSIONS)[number];

export interface WebhookTokenConfig {
  client: WebhookClient;
  /** The authentication group (`authentication.orch.io`, or `authentication.k8s.io`). */
  group: string;
  version: WebhookVersion;
  /** The server's own audiences (`--api-audiences`): what a token is for when the review names none. */
  implicitAudiences: readonly string[];
  /** How long an answer is kept; 0 disables the cache. */
  cacheTtlMs: number;
  /** The most answers kept (default 4096); the oldest go first. */
  cacheSize?: number;
}

const DEFAULT_CACHE_SIZE = 4096;

interface Cached {
  result: AuthenticationResult;
  until: number;
}

export function webhookTokenAuthenticator(c: WebhookTokenConfig): TokenAuthenticator & { close(): void } {
  const apiVersion = `${c.group}/${c.version}`;
  const cacheSize = c.cacheSize ?? DEFAULT_CACHE_SIZE;
  const cache = new Map<string, Cached>();
  const inFlight = new Map<string, Promise<{ result: AuthenticationResult; cacheable: boolean }>>();

  const remember = (key: string, result: AuthenticationResult) => {
    if (c.cacheTtlMs <= 0) return;
    if (cache.size >= cacheSize) {
      const now = Date.now();
      for (const [k, v] of cache) if (v.until <= now) cache.delete(k);
      while (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
    }
    cache.set(key, { result, until: Date.now() + c.cacheTtlMs });
  };

  const review = async (token: string, audiences: readonly string[] | undefined): Promise<{ result: AuthenticationResult; cacheable: boolean }> => {
    let answer: unknown;
    try {
      answer = await c.client.post({
        apiVersion,
        kind: 'TokenReview',
        metadata: {},
        spec: { token, ...(audiences ? { audiences: [...audiences] } : {}) },
      });
    } catch (e) {
      // Whatever went wrong, the request is refused (401), never failed as the server's own error.
      const message = e instanceof Error ? e.message : String(e);
      return { result: { kind: 'rejected', message: `Failed to make webhook authenticator request: ${message}` }, cacheable: false };
    }
    let status: ReviewStatus;
    try {
      status = decodeReview(answer, apiVersion);
    } catch (e) {
      return { result: { kind: 'rejected', message: `Failed to make webhook authenticator request: ${(e as Error).message}` }, cacheable: false };
    }
    let valid: string[] | undefined;
    if (audiences) {
      valid = intersect(audiences, status.audiences?.length ? status.audiences : c.implicitAudiences);
      if (valid.length === 0) return { result: { kind: 'no-credential' }, cacheable: true };
    }
    if (!status.authenticated) {
      if (status.error) return { result: { kind: 'rejected', message: status.error }, cacheable: false };
      return { result: { kind: 'no-credential' }, cacheable: true };
    }
    const u = status.user ?? {};
    const user: UserInfo = { name: u.username ?? '', groups: u.groups ?? [] };
    if (u.uid) user.uid = u.uid;
    if (u.extra) user.extra = u.extra;
    return { result: { kind: 'authenticated', user, ...(valid ? { audiences: valid } : {}) }, cacheable: true };
  };

  return {
    async authenticateToken(token, audiences) {
      const key = createHash('sha256')
        .update(JSON.stringify([audiences ?? null, token]))
        .digest('base64');
      const hit = cache.get(key);
      if (hit) {
        if (hit.until > Date.now()) return copy(hit.result);
        cache.delete(key);
      }
      let pending = inFlight.get(key);
      if (!pending) {
        pending = review(token, audiences).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      const { result, cacheable } = await pending;
      if (cacheable && !cache.has(key)) remember(key, result);
      return copy(result);
    },
    close: () => c.client.close(),
  };
}

/** A fresh copy, so that nobody downstream changes what the cache holds. */
function copy(r: AuthenticationResult): AuthenticationResult {
  if (r.kind !== 'authenticated') return r;
  const u = r.user;
  const user: UserInfo = { ...u, groups: [...u.groups] };
  if (u.extra) user.extra = Object.fromEntries(Object.entries(u.extra).map(([k, v]) => [k, [...v]]));
  return { ...r, user, ...(r.audiences ? { audiences: [...r.audiences] } : {}) };
}

interface ReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  audiences?: string[];
  error?: string;
}

/**
 * The status of the webhook's answer, which must be a TokenReview of `apiVersion`; fields of the
 * wrong type are refused as Go's JSON decoding refuses them (null counts as absent).
 */
function decodeReview(answer: unknown, apiVersion: string): ReviewStatus {
  if (!isObject(answer)) throw new Error('the webhook did not answer with a JSON object');
  if (answer.apiVersion !== apiVersion || answer.kind !== 'TokenReview')
    throw new Error(`the webhook answered with ${JSON.stringify(answer.apiVersion ?? '')}, kind ${JSON.stringify(answer.kind ?? '')}: expected ${JSON.stringify(apiVersion)}, kind "TokenReview"`);
  const status = optional(answer.status, 'status', isObject) ?? {};
  const user = optional(status.user, 'status.user', isObject) ?? {};
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
  const extra = optional(user.extra, 'status.user.extra', isObject);
  if (extra) for (const [k, v] of Object.entries(extra)) if (v !== null && !strings(v)) throw new Error(`status.user.extra[${JSON.stringify(k)}] must be a list of strings`);
  const out: ReviewStatus = {
    authenticated: optional(status.authenticated, 'status.authenticated', isBoolean),
    user: {
      username: optional(user.username, 'status.user.username', isString),
      uid: optional(user.uid, 'status.user.uid', isString),
      groups: optional(user.groups, 'status.user.groups', strings),
      extra: extra ? Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, (v as string[] | null) ?? []])) : undefined,
    },
    audiences: optional(status.audiences, 'status.audiences', strings),
    error: optional(status.error, 'status.error', isString),
  };
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';

const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';

function optional<T>(v: unknown, field: string, is: (v: unknown) => v is T): T | undefined {
  if (v === undefined || v === null) return undefined;
  if (!is(v)) throw new Error(`the webhook's TokenReview has a ${field} of the wrong type`);
  return v;
}
