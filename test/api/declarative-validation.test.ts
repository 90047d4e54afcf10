// Declarative validation (beta in Kubernetes 1.36): for the migrated kinds (Lease,
// LeaseCandidate) the schema's value rules run beside the hand-written checks under the
// DeclarativeValidation gate, differences count on the mismatch metric, and
// DeclarativeValidationTakeover makes the declarative result authoritative. Over real HTTP for the
// built-in kinds and /metrics; the comparison itself with synthetic definitions whose two sides
// disagree on purpose.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import {
  DeclarativeValidation,
  declarativeErrors,
  gatherMismatches,
  isDeclarativeField,
  markCoveredByDeclarative,
  validateWithMigrationChecks,
  validationIdentifier,
  type DeclarativeValidationMetrics,
} from '../../src/registry/declarative-validation.ts';
import { fieldError, type FieldError } from '../../src/machinery/field-errors.ts';
import type { KObject } from '../../src/machinery/meta.ts';
import { StatusError } from '../../src/machinery/status.ts';
import { checkObject } from '../../src/endpoints/decode.ts';
import { ALL_VERBS, type KindDefinition } from '../../src/registry/definition.ts';
import { int32, obj, objectSchema, str } from '../../src/registry/schemas.ts';
import { parseFeatureGates } from '../../src/machinery/feature-gates.ts';
import { createServerMetrics, VALIDATION_METRICS } from '../../src/server/metrics.ts';

type Body = Record<string, unknown>;

interface Cause {
  reason: string;
  message: string;
  field: string;
}

const RUNTIME_CONFIG = 'coordination.orch.io/v1beta1=true';
const NS = 'dv';
const MERGE = { 'Content-Type': 'application/merge-patch+json' };
const MISMATCH_LOG = 'declarative validation mismatch';

// One server per gate setting; each keeps its own log so mismatch reports can be looked for.
const modes = {
  on: 'DeclarativeValidation=true',
  off: 'DeclarativeValidation=false',
  takeover: 'DeclarativeValidationTakeover=true',
  offWithTakeover: 'DeclarativeValidation=false,DeclarativeValidationTakeover=true',
} as const;
type Mode = keyof typeof modes;
const MODES = Object.keys(modes) as Mode[];
const logs: Record<Mode, string[]> = { on: [], off: [], takeover: [], offWithTakeover: [] };
const servers = {} as Record<Mode, { url: string }>;
for (const mode of MODES) {
  // Coordinated leader election on, so a Lease may carry strategy and preferredHolder (and their rule runs).
  servers[mode] = await testServer({ runtimeConfig: RUNTIME_CONFIG, featureGates: `${modes[mode]},CoordinatedLeaderElection=true`, log: (m) => logs[mode].push(m) });
  assert.equal((await api(servers[mode], 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
}

const leases = `/apis/coordination.orch.io/v1/namespaces/${NS}/leases`;
const lease = (name: string, spec: Body = {}): Body => ({
  apiVersion: 'coordination.orch.io/v1',
  kind: 'Lease',
  metadata: { name },
  spec: { holderIdentity: 'me', leaseDurationSeconds: 15, leaseTransitions: 0, ...spec },
});
const candidates = `/apis/coordination.orch.io/v1beta1/namespaces/${NS}/leasecandidates`;
/** A valid candidate with `spec` merged in; `null`: no spec at all. */
const candidate = (name: string, spec: Body | null = {}): Body => ({
  apiVersion: 'coordination.orch.io/v1beta1',
  kind: 'LeaseCandidate',
  metadata: { name },
  ...(spec === null ? {} : { spec: { leaseName: 'kube-scheduler', binaryVersion: '1.33.0', emulationVersion: '1.32.0', strategy: 'OldestEmulationVersion', ...spec } }),
});

interface Rejection {
  status: number;
  reason: string;
  message: string;
  causes: Cause[];
}

/** The same request against every mode's server: each must be a 422 Invalid; the Statuses by mode. */
async function rejectEverywhere(method: string, path: string, body: Body, headers: Record<string, string> = {}): Promise<Record<Mode, Rejection>> {
  const out = {} as Record<Mode, Rejection>;
  for (const mode of MODES) {
    const r = await api(servers[mode], method, path, body, headers);
    assert.equal(r.status, 422, `${mode}: ${r.text}`);
    assert.equal(r.body.reason, 'Invalid', `${mode}: ${r.text}`);
    out[mode] = { status: r.status, reason: r.body.reason, message: r.body.message, causes: r.body.details.causes };
  }
  return out;
}

function assertSameEverywhere(got: Record<Mode, Rejection>): void {
  for (const mode of MODES) assert.deepEqual(got[mode], got.on, `${mode} differs from on`);
}

describe('migrated kinds: the same 422 with the gate on, off and with takeover', () => {
  test('Lease create: negative leaseTransitions', async () => {
    const got = await rejectEverywhere('POST', leases, lease('neg-transitions', { leaseTransitions: -1 }));
    assertSameEverywhere(got);
    assert.equal(got.on.message, 'Lease.coordination.orch.io "neg-transitions" is invalid: spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0');
    assert.deepEqual(got.on.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'spec.leaseTransitions' }]);
    for (const mode of MODES) assert.equal((await api(servers[mode], 'GET', `${leases}/neg-transitions`)).status, 404, `${mode}: nothing stored`);
  });

  test('Lease create: zero leaseDurationSeconds is rejected on the same field everywhere', async () => {
    const got = await rejectEverywhere('POST', leases, lease('zero-duration', { leaseDurationSeconds: 0 }));
    const shape = (r: Rejection) => r.causes.map((c) => `${c.reason} ${c.field}`);
    for (const mode of MODES) assert.deepEqual(shape(got[mode]), ['FieldValueInvalid spec.leaseDurationSeconds'], mode);
    // The hand-written wording wherever it is authoritative, and the schema's under takeover says the same (`minimum: 0` with `exclusiveMinimum`).
    for (const mode of MODES) assert.equal(got[mode].causes[0]!.message, 'Invalid value: 0: must be greater than 0', mode);
  });

  test('Lease: a rule the schema cannot say stays hand-written, also under takeover', async () => {
    const got = await rejectEverywhere('POST', leases, lease('holder', { preferredHolder: 'you', leaseTransitions: -2 }));
    const sorted = (r: Rejection) => r.causes.map((c) => `${c.field}: ${c.message}`).sort();
    for (const mode of MODES) {
      assert.deepEqual(sorted(got[mode]), [
        'spec.leaseTransitions: Invalid value: -2: must be greater than or equal to 0',
        'spec.preferredHolder: Forbidden: preferredHolder is only allowed if strategy is set',
      ], mode);
    }
  });

  test('Lease update (PUT and merge patch): negative leaseTransitions; the stored object is unchanged', async () => {
    const before: Partial<Record<Mode, unknown>> = {};
    for (const mode of MODES) {
      assert.equal((await api(servers[mode], 'POST', leases, lease('updated'))).status, 201, mode);
      before[mode] = (await api(servers[mode], 'GET', `${leases}/updated`)).body;
    }
    assertSameEverywhere(await rejectEverywhere('PUT', `${leases}/updated`, lease('updated', { leaseTransitions: -5 })));
    assertSameEverywhere(await rejectEverywhere('PATCH', `${leases}/updated`, { spec: { leaseTransitions: -5 } }, MERGE));
    for (const mode of MODES) assert.deepEqual((await api(servers[mode], 'GET', `${leases}/updated`)).body, before[mode], mode);
  });

  test('Lease: valid values are accepted everywhere', async () => {
    for (const mode of MODES) {
      const r = await api(servers[mode], 'POST', leases, lease('valid', { leaseDurationSeconds: 1, leaseTransitions: 0 }));
      assert.equal(r.status, 201, `${mode}: ${r.text}`);
    }
  });

  test('LeaseCandidate: an absent required field', async () => {
    const got = await rejectEverywhere('POST', candidates, candidate('no-lease-name', { leaseName: undefined }));
    assertSameEverywhere(got);
    assert.deepEqual(got.on.causes, [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.leaseName' }]);
  });

  test('LeaseCandidate: an empty spec names every required field, in the same order', async () => {
    const body = { ...candidate('empty-spec', null), spec: {} };
    const got = await rejectEverywhere('POST', candidates, body);
    assertSameEverywhere(got);
    assert.deepEqual(
      got.on.causes.map((c) => `${c.reason} ${c.field}`),
      ['FieldValueRequired spec.leaseName', 'FieldValueRequired spec.binaryVersion', 'FieldValueRequired spec.strategy'],
    );
  });

  test('LeaseCandidate: no spec at all, an empty string, a null, a bad version, an unknown strategy', async () => {
    assertSameEverywhere(await rejectEverywhere('POST', candidates, candidate('no-spec', null)));
    assertSameEverywhere(await rejectEverywhere('POST', candidates, candidate('empty-name', { leaseName: '' })));
    assertSameEverywhere(await rejectEverywhere('POST', candidates, candidate('null-strategy', { strategy: null })));
    assertSameEverywhere(await rejectEverywhere('POST', candidates, candidate('bad-version', { binaryVersion: 'v1' })));
    assertSameEverywhere(await rejectEverywhere('POST', candidates, candidate('bad-strategy', { strategy: 'Newest' })));
  });

  test('LeaseCandidate update: a required field removed by a merge patch', async () => {
    for (const mode of MODES) assert.equal((await api(servers[mode], 'POST', candidates, candidate('patched'))).status, 201, mode);
    const got = await rejectEverywhere('PATCH', `${candidates}/patched`, { spec: { binaryVersion: null } }, MERGE);
    assertSameEverywhere(got);
    assert.deepEqual(got.on.causes.map((c) => `${c.reason} ${c.field}`), ['FieldValueRequired spec.binaryVersion']);
  });

  test('type errors stay 400 decoding errors in every mode', async () => {
    for (const mode of MODES) {
      const r = await api(servers[mode], 'POST', leases, lease('typed', { leaseTransitions: 'many' }));
      assert.equal(r.status, 400, `${mode}: ${r.text}`);
    }
  });
});

// ---- /metrics ----

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format strictly enough to catch a malformed exposition. */
function parseExposition(text: string): { help: Map<string, string>; type: Map<string, string>; samples: Sample[] } {
  const help = new Map<string, string>();
  const type = new Map<string, string>();
  const samples: Sample[] = [];
  const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const sampleRe = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: \\d+)?$`);
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = new RegExp(`^# (HELP|TYPE) (${NAME}) (.*)$`).exec(line);
    if (meta) {
      if (meta[1] === 'HELP') help.set(meta[2]!, meta[3]!);
      else {
        assert.match(meta[3]!, /^(counter|gauge|histogram|summary|untyped)$/, line);
        type.set(meta[2]!, meta[3]!);
      }
      continue;
    }
    assert.ok(!line.startsWith('#') || line.startsWith('# '), `comment line: ${line}`);
    if (line.startsWith('#')) continue;
    const m = sampleRe.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? '').match(/[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"/g) ?? []) {
      const eq = pair.indexOf('=');
      labels[pair.slice(0, eq)] = JSON.parse(pair.slice(eq + 1)) as string;
    }
    const n = Number(m[3]);
    assert.ok(!Number.isNaN(n) || m[3] === 'NaN', `sample value: ${line}`);
    // Every sample belongs to a metric whose TYPE came first (histograms add suffixes).
    const family = [m[1]!, m[1]!.replace(/_(bucket|sum|count)$/, '')].find((n) => type.has(n));
    assert.ok(family, `sample before its # TYPE: ${line}`);
    samples.push({ name: m[1]!, labels, value: n });
  }
  return { help, type, samples };
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length)?.value;

describe('/metrics', () => {
  test('Prometheus text: # HELP, # TYPE and samples; mismatches and panics at 0 after all of the above', async () => {
    for (const mode of MODES) {
      const r = await api(servers[mode], 'GET', '/metrics');
      assert.equal(r.status, 200, mode);
      assert.equal(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
      const { help, type, samples } = parseExposition(r.text);
      for (const name of Object.values(VALIDATION_METRICS)) {
        assert.equal(type.get(name), 'counter', `${mode}: ${name}`);
        assert.ok(help.get(name), `${mode}: help of ${name}`);
      }
      assert.equal(value(samples, VALIDATION_METRICS.mismatch), 0, `${mode}: ${r.text}`);
      assert.equal(value(samples, VALIDATION_METRICS.panic), 0, mode);
      // Nothing broken down by identifier either: no mismatch ever happened.
      assert.equal(samples.filter((s) => s.name === VALIDATION_METRICS.mismatchByIdentifier).length, 0, mode);
      // Found by the name the specification (and Kubernetes' documentation) uses.
      assert.ok(samples.some((s) => s.name.endsWith('declarative_validation_mismatch_total') && s.value === 0), mode);
      assert.deepEqual(logs[mode].filter((l) => l.includes(MISMATCH_LOG)), [], mode);
    }
  });

  test('Kubernetes help texts and stability levels', async () => {
    const { help } = parseExposition((await api(servers.on, 'GET', '/metrics')).text);
    assert.equal(help.get('apiserver_validation_declarative_validation_mismatch_total'), '[BETA] Number of times declarative validation results differed from handwritten validation results for core types.');
    assert.equal(help.get('apiserver_validation_declarative_validation_panic_total'), '[BETA] Number of times declarative validation has panicked during validation.');
  });

  test('listed in the root document; GET and HEAD only', async () => {
    const root = await api(servers.on, 'GET', '/');
    assert.ok(root.body.paths.includes('/metrics'), root.text);
    assert.equal((await api(servers.on, 'HEAD', '/metrics')).status, 200);
    assert.equal((await api(servers.on, 'POST', '/metrics', {})).status, 405);
  });
});

// ---- the comparison, with definitions whose two sides disagree on purpose ----

/** A kind whose schema says size ≥ 1 and whose hand-written check says size ≤ 10 (claiming the schema covers it). */
const widget: KindDefinition = {
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  resource: 'widgets',
  singular: 'widget',
  namespaced: true,
  verbs: ALL_VERBS,
  nameRule: 'dns-subdomain',
  tracksGeneration: false,
  allowCreateOnUpdate: false,
  declarativeValidation: true,
  schema: objectSchema({ spec: obj({ size: int32({ minimum: 1 }), color: str({ enum: ['red', 'blue'] }), note: str() }, { required: ['color'] }) }),
  strategy: {
    validate(o) {
      const spec = (o.spec ?? {}) as { size?: number; note?: string };
      const errs: FieldError[] = [];
      if (spec.size !== undefined && spec.size > 10) errs.push(markCoveredByDeclarative(fieldError.invalid('spec.size', spec.size, 'must be at most 10')));
      if (spec.note === 'forbidden') errs.push(fieldError.forbidden('spec.note', 'not this one'));
      return errs;
    },
  },
};

const widgetObj = (spec: Body): KObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec });

/** A metrics registry of its own, read back through its exposition. */
function freshMetrics() {
  const m = createServerMetrics();
  return {
    metrics: m.validation,
    async read(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
      return value(parseExposition((await m.render()).body).samples, name, labels);
    },
  };
}

function validator(gates: string, metrics: DeclarativeValidationMetrics, log: string[]): DeclarativeValidation {
  return new DeclarativeValidation(parseFeatureGates(gates), metrics, (m) => log.push(m));
}

describe('comparison and gates (synthetic kind)', () => {
  test('a declarative error without a hand-written counterpart counts once; hand-written stays authoritative', async () => {
    const { metrics, read } = freshMetrics();
    const log: string[] = [];
    const errs = validator('', metrics, log).validate(widget, 'create', widgetObj({ size: 0, color: 'red' }), widget.strategy.validate!(widgetObj({ size: 0, color: 'red' })));
    assert.deepEqual(errs, []);
    assert.equal(await read(VALIDATION_METRICS.mismatch), 1);
    assert.equal(await read(VALIDATION_METRICS.mismatchByIdentifier, { validation_identifier: 'widget_create' }), 1);
    assert.equal(log.length, 1);
    assert.match(log[0]!, /widget_create: declarative validation mismatch: declarative error \{Type="FieldValueInvalid", Field="spec.size"\} has no hand-written counterpart/);
  });

  test('a covered hand-written error without a declarative counterpart counts too', async () => {
    const { metrics, read } = freshMetrics();
    const log: string[] = [];
    const o = widgetObj({ size: 20, color: 'red' });
    const errs = validator('', metrics, log).validate(widget, 'update', o, widget.strategy.validate!(o), 'status');
    assert.deepEqual(errs.map((e) => e.message), ['spec.size: Invalid value: 20: must be at most 10']);
    assert.equal(await read(VALIDATION_METRICS.mismatch), 1);
    assert.equal(await read(VALIDATION_METRICS.mismatchByIdentifier, { validation_identifier: 'widget_status_update' }), 1);
    assert.match(log[0]!, /hand-written error \{Type="FieldValueInvalid", Field="spec.size"\} has no declarative counterpart/);
  });

  test('takeover: the declarative errors replace the covered hand-written ones; others stay', async () => {
    const { metrics, read } = freshMetrics();
    const log: string[] = [];
    const dv = validator('DeclarativeValidationTakeover=true', metrics, log);
    const small = widgetObj({ size: 0, color: 'green', note: 'forbidden' });
    assert.deepEqual(
      dv.validate(widget, 'create', small, widget.strategy.validate!(small)).map((e) => e.message),
      ['spec.note: Forbidden: not this one', 'spec.size: Invalid value: 0: must be greater than or equal to 1', 'spec.color: Unsupported value: "green": supported values: "red", "blue"'],
    );
    const big = widgetObj({ size: 20, color: 'red' });
    assert.deepEqual(dv.validate(widget, 'create', big, widget.strategy.validate!(big)), [], 'the schema allows 20, and it decides');
    assert.equal(await read(VALIDATION_METRICS.mismatch), 3);
    assert.ok(log.every((l) => l.includes('DeclarativeValidationTakeover')), log.join('\n'));
  });

  test('gate off: schema value rules do not run, neither at decoding nor at validation; takeover alone changes nothing', async () => {
    for (const gates of ['DeclarativeValidation=false', 'DeclarativeValidation=false,DeclarativeValidationTakeover=true']) {
      const { metrics, read } = freshMetrics();
      const log: string[] = [];
      const o = widgetObj({ size: 0, color: 'green' });
      // Only the schema rejects this object: decoding lets it through (a migrated kind's value rules are not decoding's)...
      const decoded = checkObject(structuredClone(o), widget, 'Strict', []);
      assert.deepEqual(decoded.obj.spec, { size: 0, color: 'green' });
      // ...and validation with the gate off returns the (empty) hand-written result.
      assert.deepEqual(validator(gates, metrics, log).validate(widget, 'create', o, widget.strategy.validate!(o)), [], gates);
      assert.equal(await read(VALIDATION_METRICS.mismatch), 0, gates);
      assert.deepEqual(log, [], gates);
    }
    // The runner does not even call the declarative side.
    let called = false;
    const { metrics } = freshMetrics();
    const declarative = (): FieldError[] => {
      called = true;
      return [];
    };
    validateWithMigrationChecks({ enabled: false, takeover: true, identifier: 'x_create', handwritten: [], declarative, metrics, log: () => {} });
    assert.equal(called, false);
  });

  test('a kind that is not migrated keeps its schema value rules at decoding and is never compared', async () => {
    const plain: KindDefinition = { ...widget, declarativeValidation: false };
    assert.throws(
      () => checkObject(structuredClone(widgetObj({ size: 0, color: 'red' })), plain, 'Strict', []),
      (e: unknown) => e instanceof StatusError && e.code === 422 && e.message.includes('spec.size: Invalid value: 0: must be greater than or equal to 1'),
    );
    const { metrics, read } = freshMetrics();
    const o = widgetObj({ size: 0, color: 'red' });
    assert.deepEqual(validator('DeclarativeValidationTakeover=true', metrics, []).validate(plain, 'create', o, []), []);
    assert.equal(await read(VALIDATION_METRICS.mismatch), 0);
  });

  test('decoding of a migrated kind still rejects type errors (400) and metadata rules (422)', () => {
    assert.throws(
      () => checkObject(widgetObj({ size: 'big', color: 'red' }), widget, 'Strict', []),
      (e: unknown) => e instanceof StatusError && e.code === 400,
    );
    const dupFinalizers = { ...widgetObj({ color: 'red' }), metadata: { name: 'w', finalizers: ['a/b', 'a/b'] } };
    assert.throws(
      () => checkObject(dupFinalizers, widget, 'Strict', []),
      (e: unknown) => e instanceof StatusError && e.code === 422 && e.message.includes('metadata.finalizers[1]: Duplicate value'),
    );
  });

  test('a throwing declarative validator is counted as a panic: logged, or under takeover a failed request', async () => {
    const { metrics, read } = freshMetrics();
    const log: string[] = [];
    const handwritten = [fieldError.required('spec.x')];
    const boom = () => {
      throw new Error('boom');
    };
    assert.equal(validateWithMigrationChecks({ enabled: true, takeover: false, identifier: 'widget_create', handwritten, declarative: boom, metrics, log: (m) => log.push(m) }), handwritten);
    assert.deepEqual(log, ['widget_create: panic during declarative validation: boom']);
    assert.throws(
      () => validateWithMigrationChecks({ enabled: true, takeover: true, identifier: 'widget_create', handwritten, declarative: boom, metrics, log: (m) => log.push(m) }),
      (e: unknown) => e instanceof StatusError && e.code === 500 && e.message.includes('panic during declarative validation: boom'),
    );
    assert.equal(await read(VALIDATION_METRICS.panic), 2);
    assert.equal(await read(VALIDATION_METRICS.panicByIdentifier, { validation_identifier: 'widget_create' }), 2);
    assert.equal(await read(VALIDATION_METRICS.mismatch), 0);
  });

  test('matching: by type and field, one covered error to many declarative ones; repeats and uncovered errors ignored', () => {
    const covered = markCoveredByDeclarative(fieldError.invalid('spec.a', 1, 'hand-written words'));
    const twin = fieldError.invalid('spec.a', 1, 'hand-written words');
    const decl = [fieldError.invalid('spec.a', 1, 'other words'), fieldError.invalid('spec.a', 1, 'more words')];
    assert.deepEqual(gatherMismatches([covered, twin], decl, false), []);
    // Same field, other type: no match.
    assert.equal(gatherMismatches([covered], [fieldError.required('spec.a')], false).length, 2);
    // Not covered: never compared, whatever the declarative side says.
    assert.deepEqual(gatherMismatches([fieldError.forbidden('spec.b', 'no')], [], false), []);
    // Covered errors repeated by a check run twice count once.
    const again = markCoveredByDeclarative(fieldError.invalid('spec.a', 1, 'hand-written words'));
    assert.equal(gatherMismatches([covered, again], [], false).length, 1);
  });

  test('what declarative validation covers, and the metric identifiers', () => {
    assert.deepEqual(['spec', 'spec.a[0].b', 'status.x', 'handler'].map(isDeclarativeField), [true, true, true, true]);
    assert.deepEqual(['', 'metadata.name', 'metadata', 'apiVersion', 'kind'].map(isDeclarativeField), [false, false, false, false, false]);
    // The envelope and metadata are left out even when the schema has rules there.
    const o = { ...widgetObj({ size: 0 }), metadata: { name: 'w', finalizers: ['x', 'x'] } };
    assert.deepEqual(declarativeErrors(widget, o).map((e) => e.field), ['spec.color', 'spec.size']);
    assert.equal(validationIdentifier('Lease', 'create'), 'lease_create');
    assert.equal(validationIdentifier('Node', 'update', 'status'), 'node_status_update');
  });

  test('each server counts in its own registry', async () => {
    // The synthetic mismatches above went to registries of their own, none to a server's.
    const { samples } = parseExposition((await api(servers.on, 'GET', '/metrics')).text);
    assert.equal(value(samples, VALIDATION_METRICS.mismatch), 0);
  });
});
