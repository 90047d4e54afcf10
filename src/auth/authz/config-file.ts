// The AuthorizationConfiguration (`--authorization-config`): the ordered authorizers, each with a
// type and a name, and for webhooks their connection, versions, cache, failure policy and match
// conditions. Decoded strictly (unknown or mistyped fields are errors), defaulted and validated with
// kube-apiserver's field errors, its match conditions compiled in the `request` environment.
// The file is followed: a change (or, at the latest, a minute) reloads it; a version that does not
// load, or that adds or removes a non-webhook authorizer, is reported and the previous one stays.

import { readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { yaml } from '../../machinery/yaml.ts';
import { child, fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { dns1123Subdomain } from '../../machinery/meta.ts';
import { cel } from '../../cel/load.ts';
import { loadKubeconfig, type OutboundClientConfig } from '../kubeconfig.ts';
import { webhookClient, type WebhookTarget } from '../../machinery/webhook-client.ts';
import type { Authorizer } from './authorizer.ts';
import { authorizerChain } from './modes.ts';
import { matchConditionEnvironment, webhookAuthorizer, type AuthorizationWebhookMetrics, type FailurePolicy, type MatchCondition, type SarVersion } from './webhook.ts';
import { checkShape, jsonType, type Shape } from '../strict-shape.ts';

/** The types a configuration may name (kube-apiserver's modes); all but Webhook at most once. */
export const AUTHORIZER_TYPES = ['ABAC', 'AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC', 'Webhook'] as const;
export const MAX_MATCH_CONDITIONS = 64;
const MAX_TIMEOUT_MS = 30_000;

export interface WebhookSettings {
  timeoutMs: number;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  version: SarVersion;
  failurePolicy: FailurePolicy;
  connection: { type: 'KubeConfigFile'; kubeConfigFile: string } | { type: 'InClusterConfig' };
  matchConditions: MatchCondition[];
}

export type AuthorizerEntry = { type: 'Webhook'; name: string; webhook: WebhookSettings } | { type: Exclude<(typeof AUTHORIZER_TYPES)[number], 'Webhook'>; name: string };

export interface AuthorizationConfig {
  authorizers: AuthorizerEntry[];
}

// ------------------------------------------------------------------------------------------------
// Decoding

const WEBHOOK_SHAPE: Record<string, Shape> = {
  timeout: 'string',
  authorizedTTL: 'string',
  cacheAuthorizedRequests: 'bool',
  unauthorizedTTL: 'string',
  cacheUnauthorizedRequests: 'bool',
  subjectAccessReviewVersion: 'string',
  matchConditionSubjectAccessReviewVersion: 'string',
  failurePolicy: 'string',
  connectionInfo: { object: { type: 'string', kubeConfigFile: 'string' } },
  matchConditions: { list: { expression: 'string' } },
};
const CONFIG_SHAPE: Record<string, Shape> = {
  apiVersion: 'string',
  kind: 'string',
  authorizers: { list: { type: 'string', name: 'string', webhook: { object: WEBHOOK_SHAPE } } },
};

interface RawWebhook {
  timeout?: string;
  authorizedTTL?: string;
  cacheAuthorizedRequests?: boolean;
  unauthorizedTTL?: string;
  cacheUnauthorizedRequests?: boolean;
  subjectAccessReviewVersion?: string;
  matchConditionSubjectAccessReviewVersion?: string;
  failurePolicy?: string;
  connectionInfo?: { type?: string; kubeConfigFile?: string };
  matchConditions?: { expression?: string }[];
}
interface RawConfig {
  authorizers?: { type?: string; name?: string; webhook?: RawWebhook | null }[];
}

/** `text` as an AuthorizationConfiguration of `group` (v1, v1beta1 or v1alpha1); throws its decoding error. */
function decode(text: string, group: string): RawConfig {
  if (text.trim() === '') throw new Error('empty config data');
  let doc: unknown;
  try {
    doc = yaml().parse(text, { uniqueKeys: true });
  } catch (e) {
    throw new Error(`error converting YAML to JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  if (jsonType(doc) !== 'object') throw new Error("couldn't get version/kind; json parse error: expected an object");
  const obj = doc as Record<string, unknown>;
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  if (!kind) throw new Error(`Object 'Kind' is missing in '${JSON.stringify(obj)}'`);
  const versions = ['v1', 'v1beta1', 'v1alpha1'].map((v) => `${group}/${v}`);
  if (kind !== 'AuthorizationConfiguration' || !versions.includes(apiVersion)) throw new Error(`no kind "${kind}" is registered for version "${apiVersion}"`);
  const unknown: string[] = [];
  const typeErrors: string[] = [];
  checkShape(obj, CONFIG_SHAPE, '', unknown, typeErrors);
  if (typeErrors.length) throw new Error(typeErrors[0]);
  if (unknown.length) throw new Error(`strict decoding error: ${unknown.map((u) => `unknown field "${u}"`).join(', ')}`);
  return obj as RawConfig;
}

// ------------------------------------------------------------------------------------------------
// Validation

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in milliseconds; undefined when invalid. */
function goDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const m = /^([+-])?((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(text);
  if (!m) return undefined;
  let total = 0;
  for (const part of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(part[1]) * DURATION_UNITS[part[2]!]!;
  return m[1] === '-' ? -total : total;
}

/** Go's Duration.String() for whole milliseconds and more (`5m0s`, `1.5s`, `-1s`). */
function goDurationString(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = `${Number((rest / 1000).toFixed(3))}s`;
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}`;
}

export interface LoadOptions {
  /** The configuration group (`apiserver.config.orch.io`, or `apiserver.config.k8s.io`). */
  group: string;
  /** On reload: the non-webhook types of the first configuration, which may not change. */
  requireNonWebhookTypes?: readonly string[];
}

/** Decodes, defaults and validates `text`; throws an Error of one line (kube's aggregate of field errors). */
export function parseAuthorizationConfig(text: string, o: LoadOptions): AuthorizationConfig {
  let raw: RawConfig;
  try {
    raw = decode(text, o.group);
  } catch (e) {
    throw new Error(`failed to load AuthorizationConfiguration from file: ${(e as Error).message}`);
  }
  const errors: FieldError[] = [];
  const authorizers: AuthorizerEntry[] = [];
  const list = raw.authorizers ?? [];
  if (!list.length) errors.push(fieldError.required('authorizers', 'at least one authorization mode must be defined'));
  const seenTypes = new Set<string>();
  const seenNames = new Set<string>();
  list.forEach((a, i) => {
    const path = child('authorizers', i);
    const type = a?.type ?? '';
    if (!type) return void errors.push(fieldError.required(`${path}.type`));
    if (!(AUTHORIZER_TYPES as readonly string[]).includes(type)) return void errors.push(fieldError.notSupported(`${path}.type`, type, AUTHORIZER_TYPES));
    if (seenTypes.has(type) && type !== 'Webhook') return void errors.push(fieldError.duplicate(`${path}.type`, type));
    seenTypes.add(type);
    const name = a.name ?? '';
    if (!name) errors.push(fieldError.required(`${path}.name`));
    else if (seenNames.has(name)) errors.push(fieldError.duplicate(`${path}.name`, name));
    else {
      const problems = dns1123Subdomain(name);
      if (problems.length) errors.push(fieldError.invalid(`${path}.name`, name, `authorizer name is invalid: ${problems.join(', ')}`));
    }
    seenNames.add(name);
    if (type !== 'Webhook') {
      if (a.webhook) errors.push(fieldError.invalid(`${path}.webhook`, 'non-null', 'may only be specified when type=Webhook'));
      else authorizers.push({ type: type as Exclude<AuthorizerEntry['type'], 'Webhook'>, name });
      return;
    }
    if (!a.webhook) return void errors.push(fieldError.required(`${path}.webhook`, 'required when type=Webhook'));
    const webhook = validateWebhook(a.webhook, `${path}.webhook`, errors);
    if (webhook) authorizers.push({ type: 'Webhook', name, webhook });
  });
  if (errors.length) throw new Error(errors.length === 1 ? errors[0]!.message : `[${errors.map((e) => e.message).join(', ')}]`);
  // kube-apiserver names the built-in authorizers after their type, so metrics stay comparable.
  for (const a of authorizers) if (a.type !== 'Webhook' && a.name !== a.type.toLowerCase()) throw new Error(`expected name ${a.type.toLowerCase()} for authorizer ${a.type} instead of ${a.name}`);
  if (o.requireNonWebhookTypes) {
    const now = [...new Set(authorizers.filter((a) => a.type !== 'Webhook').map((a) => a.type))].sort();
    const before = [...o.requireNonWebhookTypes].sort();
    if (now.join(',') !== before.join(',')) throw new Error(`non-webhook authorizer types changed from [${before.join(' ')}] to [${now.join(' ')}]: a reload may only change webhooks and the order`);
  }
  return { authorizers };
}

function validateWebhook(w: RawWebhook, path: string, errors: FieldError[]): WebhookSettings | undefined {
  const before = errors.length;
  const duration = (field: 'timeout' | 'authorizedTTL' | 'unauthorizedTTL', fallback: number | undefined): number => {
    const text = w[field];
    if (text === undefined || text === '') {
      if (fallback === undefined) errors.push(fieldError.required(child(path, field)));
      return fallback ?? 0;
    }
    const ms = goDuration(text);
    if (ms === undefined) {
      errors.push(fieldError.invalid(child(path, field), text, `time: invalid duration ${JSON.stringify(text)}`));
      return 0;
    }
    // Defaults fill a zero duration, as kube's defaulting does.
    if (ms === 0 && fallback !== undefined) return fallback;
    return ms;
  };
  const timeoutMs = duration('timeout', undefined);
  if (timeoutMs && (timeoutMs > MAX_TIMEOUT_MS || timeoutMs < 0)) errors.push(fieldError.invalid(`${path}.timeout`, goDurationString(timeoutMs), 'must be > 0s and <= 30s'));
  const authorizedTtlMs = duration('authorizedTTL', 5 * 60_000);
  if (authorizedTtlMs < 0) errors.push(fieldError.invalid(`${path}.authorizedTTL`, goDurationString(authorizedTtlMs), 'must be > 0s'));
  const unauthorizedTtlMs = duration('unauthorizedTTL', 30_000);
  if (unauthorizedTtlMs < 0) errors.push(fieldError.invalid(`${path}.unauthorizedTTL`, goDurationString(unauthorizedTtlMs), 'must be > 0s'));

  const version = w.subjectAccessReviewVersion ?? '';
  if (!version) errors.push(fieldError.required(`${path}.subjectAccessReviewVersion`));
  else if (version !== 'v1' && version !== 'v1beta1') errors.push(fieldError.notSupported(`${path}.subjectAccessReviewVersion`, version, ['v1', 'v1beta1']));
  const conditions = w.matchConditions ?? [];
  const mcVersion = w.matchConditionSubjectAccessReviewVersion ?? '';
  if (!mcVersion) errors.push(fieldError.required(`${path}.matchConditionSubjectAccessReviewVersion`, conditions.length ? 'required if match conditions are specified' : ''));
  else if (mcVersion !== 'v1') errors.push(fieldError.notSupported(`${path}.matchConditionSubjectAccessReviewVersion`, mcVersion, ['v1']));
  const policy = w.failurePolicy ?? '';
  if (!policy) errors.push(fieldError.required(`${path}.failurePolicy`));
  else if (policy !== 'NoOpinion' && policy !== 'Deny') errors.push(fieldError.notSupported(`${path}.failurePolicy`, policy, ['NoOpinion', 'Deny']));

  const ci = w.connectionInfo ?? {};
  const cpath = `${path}.connectionInfo`;
  let connection: WebhookSettings['connection'] | undefined;
  if (!ci.type) errors.push(fieldError.required(`${cpath}.type`));
  else if (ci.type === 'InClusterConfig') {
    if (ci.kubeConfigFile !== undefined) errors.push(fieldError.invalid(`${cpath}.kubeConfigFile`, ci.kubeConfigFile, 'can only be set when type=KubeConfigFile'));
    connection = { type: 'InClusterConfig' };
  } else if (ci.type === 'KubeConfigFile') {
    const file = ci.kubeConfigFile ?? '';
    if (!file) errors.push(fieldError.required(`${cpath}.kubeConfigFile`));
    else if (!isAbsolute(file)) errors.push(fieldError.invalid(`${cpath}.kubeConfigFile`, file, 'must be an absolute path'));
    else {
      try {
        if (!statSync(file).isFile()) errors.push(fieldError.invalid(`${cpath}.kubeConfigFile`, file, 'must be a regular file'));
        else connection = { type: 'KubeConfigFile', kubeConfigFile: file };
      } catch (e) {
        errors.push(fieldError.invalid(`${cpath}.kubeConfigFile`, file, `error loading file: ${(e as Error).message}`));
      }
    }
  } else errors.push(fieldError.notSupported(`${cpath}.type`, ci.type, ['InClusterConfig', 'KubeConfigFile']));

  const matchConditions: MatchCondition[] = [];
  if (conditions.length > MAX_MATCH_CONDITIONS) errors.push(fieldError.tooMany(`${path}.matchConditions`, conditions.length, MAX_MATCH_CONDITIONS));
  else {
    const seen = new Set<string>();
    conditions.forEach((c, i) => {
      const p = `${child(`${path}.matchConditions`, i)}.expression`;
      const expression = c?.expression ?? '';
      if (!expression.trim()) return void errors.push(fieldError.required(p));
      if (seen.has(expression)) return void errors.push(fieldError.duplicate(p, expression));
      seen.add(expression);
      try {
        const program = matchConditionEnvironment().env.compile(expression);
        if (program.outputType !== 'bool') errors.push(fieldError.invalid(p, expression, `matchCondition ${expression} must evaluate to bool`));
        else matchConditions.push({ expression, program });
      } catch (e) {
        if (!(e instanceof cel().errors.CelCompileError)) throw e;
        errors.push(fieldError.invalid(p, expression, `compilation failed: ${e.message}`));
      }
    });
  }
  if (errors.length > before || !connection) return undefined;
  return {
    timeoutMs,
    authorizedTtlMs: w.cacheAuthorizedRequests === false ? 0 : authorizedTtlMs,
    unauthorizedTtlMs: w.cacheUnauthorizedRequests === false ? 0 : unauthorizedTtlMs,
    version: version as SarVersion,
    failurePolicy: policy as FailurePolicy,
    connection,
    matchConditions,
  };
}

// ------------------------------------------------------------------------------------------------
// The authorizer of a configuration, and its reload

/** Where a pod's service-account files are mounted (client-go's in-cluster paths). */
export const IN_CLUSTER_SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** How long client-go keeps a token read from the file (a minute, less its ten seconds of leeway). */
const IN_CLUSTER_TOKEN_REREAD_MS = 50_000;

export interface InClusterOptions {
  /** The directory of `token` and `ca.crt` (default the pod's). */
  dir?: string;
  /** How long a token read is used before the file is read again (default 50 s, as client-go). */
  tokenRereadMs?: number;
  env?: NodeJS.ProcessEnv;
  log?: (message: string) => void;
}

/**
 * client-go's in-cluster configuration (rest.InClusterConfig): the service's address from
 * KUBERNETES_SERVICE_HOST and _PORT (an IPv6 host bracketed), the pod's service-account token and
 * its CA. The token is read now (an unreadable one is an error) and again once the read is older
 * than `tokenRereadMs` or the service answered 401; a read that fails or finds the file empty keeps
 * the last token, as client-go's cached file token source does. A CA that cannot be read or holds
 * no certificate is logged and the system's roots are trusted instead, as client-go does.
 */
export function inClusterClientConfig(o: InClusterOptions = {}): OutboundClientConfig & { tokenRejected(): void } {
  const env = o.env ?? process.env;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined');
  const dir = o.dir ?? IN_CLUSTER_SERVICE_ACCOUNT_DIR;
  const tokenFile = join(dir, 'token');
  const caFile = join(dir, 'ca.crt');
  const rereadMs = o.tokenRereadMs ?? IN_CLUSTER_TOKEN_REREAD_MS;
  let token: string;
  try {
    token = readFileSync(tokenFile, 'utf8').trim();
  } catch (e) {
    throw new Error(goFileError(e as NodeJS.ErrnoException, tokenFile));
  }
  let readAt = Date.now();
  let ca: string | undefined;
  try {
    ca = readFileSync(caFile, 'utf8');
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error('data does not contain any valid RSA or ECDSA certificates');
  } catch (e) {
    ca = undefined;
    o.log?.(`expected to load root CA config from ${caFile}, but got err: ${goFileError(e as NodeJS.ErrnoException, caFile)}`);
  }
  const currentToken = () => {
    if (Date.now() - readAt >= rereadMs) {
      readAt = Date.now();
      let next: string | undefined;
      try {
        next = readFileSync(tokenFile, 'utf8').trim();
      } catch (e) {
        o.log?.(`Unable to rotate token: failed to read token file ${JSON.stringify(tokenFile)}: ${goFileError(e as NodeJS.ErrnoException, tokenFile)}`);
      }
      if (next) token = next;
      else if (next === '') o.log?.(`Unable to rotate token: read empty token from file ${JSON.stringify(tokenFile)}`);
    }
    return token || undefined;
  };
  return {
    url: new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}`),
    ...(ca !== undefined && { ca }),
    insecureSkipTlsVerify: false,
    token: currentToken,
    tokenRejected: () => void (readAt = 0),
  };
}

/** A file error as Go words it (`open <path>: no such file or directory`); other errors as they are. */
function goFileError(e: NodeJS.ErrnoException, path: string): string {
  const m = e.code && /^[A-Z]+: (.*?), (\w+)/.exec(e.message);
  return m ? `${m[2]} ${path}: ${m[1]}` : e.message;
}

export interface ChainContext {
  /** The authorization group SubjectAccessReviews are sent in. */
  authorizationGroup: string;
  /** The authorizer of each non-webhook type (the same instance across reloads). */
  builtIn(type: Exclude<AuthorizerEntry['type'], 'Webhook'>): Authorizer;
  /** Put in front of the configured authorizers (members of system:masters). */
  first: Authorizer;
  log: (message: string) => void;
  /** Where webhooks of type InClusterConfig find the pod's files, and how often they re-read the token. */
  inCluster?: Pick<InClusterOptions, 'dir' | 'tokenRereadMs'>;
  /** Where the webhooks report their calls and match conditions. */
  webhookMetrics?: AuthorizationWebhookMetrics;
  /** Told of each configured authorizer's allow or deny (apiserver_authorization_decisions_total); no opinion is not terminal, so not told. */
  decided?(type: AuthorizerEntry['type'], name: string, decision: 'allowed' | 'denied'): void;
}

/** `inner`, its allows and denies told to `ctx.decided` (kube's instrumented authorizer). */
function instrumented(ctx: ChainContext, type: AuthorizerEntry['type'], name: string, inner: Authorizer): Authorizer {
  const decided = ctx.decided;
  if (!decided) return inner;
  return {
    authorize: (attrs) =>
      inner.authorize(attrs).then((d) => {
        if (d.decision !== 'no-opinion') decided(type, name, d.decision === 'allow' ? 'allowed' : 'denied');
        return d;
      }),
  };
}

/** The chain a configuration describes; `close` releases its webhooks' connections. Throws one line on an unusable kubeconfig. */
export function configuredChain(config: AuthorizationConfig, ctx: ChainContext): Authorizer & { close(): void } {
  const closers: (() => void)[] = [];
  const each: Authorizer[] = [ctx.first];
  try {
    for (const a of config.authorizers) {
      if (a.type !== 'Webhook') {
        each.push(instrumented(ctx, a.type, a.name, ctx.builtIn(a.type)));
        continue;
      }
      const w = a.webhook;
      let target: WebhookTarget;
      try {
        target = w.connection.type === 'KubeConfigFile' ? loadKubeconfig(w.connection.kubeConfigFile) : inClusterClientConfig({ ...ctx.inCluster, log: ctx.log });
      } catch (e) {
        throw new Error(`authorizer ${a.name}: ${(e as Error).message}`);
      }
      const authorizer = webhookAuthorizer({
        name: a.name,
        client: webhookClient(target, { timeoutMs: w.timeoutMs, onAttempt: ctx.webhookMetrics && ((result, seconds) => ctx.webhookMetrics!.evaluation(a.name, result, seconds)) }),
        group: ctx.authorizationGroup,
        version: w.version,
        authorizedTtlMs: w.authorizedTtlMs,
        unauthorizedTtlMs: w.unauthorizedTtlMs,
        failurePolicy: w.failurePolicy,
        matchConditions: w.matchConditions,
        log: ctx.log,
        metrics: ctx.webhookMetrics,
      });
      closers.push(() => authorizer.close());
      each.push(instrumented(ctx, 'Webhook', a.name, authorizer));
    }
  } catch (e) {
    closers.forEach((c) => c());
    throw e;
  }
  return { ...authorizerChain(each), close: () => closers.forEach((c) => c()) };
}

export interface ReloadStats {
  reloaded(ok: boolean): void;
}

export interface ReloadingOptions extends ChainContext {
  path: string;
  group: string;
  /** The text and configuration the server started with. */
  initialText: string;
  initial: AuthorizationConfig;
  stats?: ReloadStats;
  /** Besides change events, how often the file is read again (default 1 min). */
  pollIntervalMs?: number;
}

/** The configured chain, replaced as a whole when the file changes to a valid configuration. */
export function reloadingAuthorizer(o: ReloadingOptions): Authorizer & { close(): void } {
  let current = configuredChain(o.initial, o);
  let tracked = o.initialText;
  let closed = false;
  const required = [...new Set(o.initial.authorizers.filter((a) => a.type !== 'Webhook').map((a) => a.type))];

  const reload = () => {
    if (closed) return;
    let text: string;
    try {
      text = readFileSync(o.path, 'utf8');
    } catch (e) {
      o.log(`failed to read authorization config file: ${(e as Error).message}`);
      o.stats?.reloaded(false);
      return;
    }
    if (text === tracked) return;
    // A version that does not load never will: remember it so it is not retried.
    tracked = text;
    let next: Authorizer & { close(): void };
    try {
      next = configuredChain(parseAuthorizationConfig(text, { group: o.group, requireNonWebhookTypes: required }), o);
    } catch (e) {
      o.log(`error reloading authorization config: ${(e as Error).message}`);
      o.stats?.reloaded(false);
      return;
    }
    const old = current;
    current = next;
    old.close();
    o.log('reloaded authorization config');
    o.stats?.reloaded(true);
  };

  // The directory is watched, so a file replaced by a rename (as editors and ConfigMaps do) is seen.
  let watcher: FSWatcher | undefined;
  try {
    const name = basename(o.path);
    watcher = watch(dirname(o.path), { persistent: false }, (_event, file) => {
      if (file === null || file === name || String(file).startsWith('..')) reload();
    });
    watcher.on('error', (e) => o.log(`watching authorization config file: ${e.message}`));
  } catch (e) {
    o.log(`watching authorization config file: ${(e as Error).message}`);
  }
  const poll = setInterval(reload, o.pollIntervalMs ?? 60_000).unref();

  return {
    authorize: (attrs) => current.authorize(attrs),
    close() {
      closed = true;
      watcher?.close();
      clearInterval(poll);
      current.close();
    },
  };
}

/** Reads and validates the file at start; throws an Error of one line. */
export function loadAuthorizationConfig(path: string, group: string): { text: string; config: AuthorizationConfig } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`failed to load AuthorizationConfiguration from file ${JSON.stringify(path)}: ${(e as Error).message}`);
  }
  return { text, config: parseAuthorizationConfig(text, { group }) };
}
