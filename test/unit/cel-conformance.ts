// Runs the official CEL conformance suite (the test data @bufbuild/cel-spec ships) against the
// expression environment. Used by cel-conformance.test.ts; run directly with `--print` to list the
// failing cases and what went wrong (node --import tsx test/unit/cel-conformance.ts --print).

import { getConformanceSuite, type IncrementalTest, type IncrementalTestSuite } from '@bufbuild/cel-spec/testdata/tests.js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { CelEnvironment, type CelVariable } from '../../src/cel/environment.ts';
import { CelError } from '../../src/cel/errors.ts';
import { celEquals } from '../../src/cel/library/values.ts';

/** Sections that need protocol-buffer messages, or libraries the API contract does not list. */
export const EXCLUDED_SECTIONS: Record<string, string> = {
  dynamic: 'protobuf message and wrapper types (TestAllTypes fields, google.protobuf.Value/Struct/Any)',
  enums: 'protobuf enums of TestAllTypes',
  proto2: 'protobuf message literals and fields',
  proto3: 'protobuf message literals and fields',
  proto2_ext: 'protobuf extensions',
  wrappers: 'protobuf wrapper types (google.protobuf.Int32Value …)',
  namespace: 'containers (qualified name resolution against a protobuf package); Kubernetes declares none',
  type_deductions: "compares the checker's deduced type names (cel-go's checker output), mostly over TestAllTypes",
  math_ext: 'the math extension (math.greatest, math.ceil …): not in the API contract',
  encoders_ext: 'the encoders extension (base64.encode/decode): not in the API contract',
  block_ext: 'cel.block, an internal optimiser form: not in the API contract',
  unknowns: 'no cases (partial evaluation)',
};

/** Cases of included sections that need what a JSON-typed environment has not: protobuf messages. */
const PROTO_ONLY = /TestAllTypes|NestedTestAllTypes|google\.protobuf\.(?!Duration\b|Timestamp\b)|cel\.expr\.conformance|\.proto[23]\b|GlobalEnum|TestRequired/;

interface ValueMsg {
  kind: { case: string | undefined; value?: unknown };
}
interface TypeMsg {
  typeKind: { case: string | undefined; value?: unknown };
}

const PRIMITIVES: Record<number, string> = { 1: 'bool', 2: 'int', 3: 'uint', 4: 'double', 5: 'string', 6: 'bytes' };
const WELL_KNOWN: Record<number, string> = { 1: 'dyn', 2: 'google.protobuf.Timestamp', 3: 'google.protobuf.Duration' };

class NotApplicable extends Error {}

function typeString(t: TypeMsg): string {
  const v = t.typeKind.value;
  switch (t.typeKind.case) {
    case 'primitive':
      return PRIMITIVES[v as number] ?? 'dyn';
    case 'wellKnown':
      return WELL_KNOWN[v as number] ?? 'dyn';
    case 'listType':
      return `list<${typeString((v as { elemType: TypeMsg }).elemType)}>`;
    case 'mapType': {
      const m = v as { keyType: TypeMsg; valueType: TypeMsg };
      return `map<${typeString(m.keyType)}, ${typeString(m.valueType)}>`;
    }
    case 'dyn':
      return 'dyn';
    case 'null':
      return 'null';
    case 'abstractType': {
      const a = v as { name: string; parameterTypes: TypeMsg[] };
      if (a.name === 'optional_type' && a.parameterTypes[0]) return `optional<${typeString(a.parameterTypes[0])}>`;
      throw new NotApplicable(`abstract type ${a.name}`);
    }
    case 'type':
      return 'type';
    default:
      throw new NotApplicable(`type ${t.typeKind.case}`);
  }
}

function varint(bytes: Uint8Array, at: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const b = bytes[at++]!;
    result |= BigInt(b & 0x7f) << shift;
    shift += 7n;
    if ((b & 0x80) === 0) return [BigInt.asIntN(64, result), at];
  }
}

/** seconds and nanos of an encoded google.protobuf.Duration or Timestamp. */
function secondsNanos(bytes: Uint8Array): [bigint, number] {
  let seconds = 0n;
  let nanos = 0;
  for (let at = 0; at < bytes.length; ) {
    const [tag, next] = varint(bytes, at);
    const [value, after] = varint(bytes, next);
    if (tag === 8n) seconds = value;
    else if (tag === 16n) nanos = Number(BigInt.asIntN(32, value));
    at = after;
  }
  return [seconds, nanos];
}

function celValue(v: ValueMsg): unknown {
  const x = v.kind.value;
  switch (v.kind.case) {
    case 'nullValue':
      return null;
    case 'boolValue':
    case 'stringValue':
    case 'doubleValue':
      return x;
    case 'int64Value':
      return x as bigint;
    case 'uint64Value':
      return new UnsignedInt(x as bigint);
    case 'bytesValue':
      return x as Uint8Array;
    case 'listValue':
      return (x as { values: ValueMsg[] }).values.map(celValue);
    case 'mapValue': {
      const out = new Map<unknown, unknown>();
      for (const e of (x as { entries: { key: ValueMsg; value: ValueMsg }[] }).entries) out.set(celValue(e.key), celValue(e.value));
      return out;
    }
    case 'objectValue': {
      const any = x as { typeUrl: string; value: Uint8Array };
      const [s, n] = secondsNanos(any.value);
      if (any.typeUrl.endsWith('/google.protobuf.Duration')) return new Duration(s, n);
      if (any.typeUrl.endsWith('/google.protobuf.Timestamp')) return new Date(Number(s) * 1000 + Math.floor(n / 1e6));
      throw new NotApplicable(`object ${any.typeUrl}`);
    }
    case 'typeValue':
      return { typeName: x as string };
    default:
      throw new NotApplicable(`value ${v.kind.case}`);
  }
}

/** Expected value against actual; maps compare as CEL maps, types by name. */
function sameValue(expected: unknown, actual: unknown): boolean {
  if (typeof expected === 'object' && expected !== null && 'typeName' in expected) {
    const name = (actual as { name?: string } | null)?.name;
    const want = (expected as { typeName: string }).typeName;
    return name === want || (want === 'null_type' && name === 'null') || (want === 'type' && name === 'type');
  }
  if (typeof expected === 'number' && Number.isNaN(expected)) return typeof actual === 'number' && Number.isNaN(actual);
  if (typeof expected !== typeof actual && !(expected instanceof UnsignedInt) && !(actual instanceof UnsignedInt)) return false;
  if (expected instanceof UnsignedInt) return actual instanceof UnsignedInt && actual.valueOf() === expected.valueOf();
  if (actual instanceof UnsignedInt) return false;
  if (Array.isArray(expected)) {
    const a = actual instanceof Set ? [...actual] : actual;
    return Array.isArray(a) && a.length === expected.length && expected.every((e, i) => sameValue(e, a[i]));
  }
  if (expected instanceof Map) {
    const a = actual instanceof Map ? actual : typeof actual === 'object' && actual !== null ? new Map(Object.entries(actual)) : undefined;
    if (!a || a.size !== expected.size) return false;
    for (const [k, v] of expected) {
      const key = [...a.keys()].find((ak) => celEquals(ak, k) && typeof ak === typeof k);
      if (key === undefined && !a.has(k)) return false;
      if (!sameValue(v, a.get(key ?? k))) return false;
    }
    return true;
  }
  return celEquals(expected, actual);
}

export interface CaseResult {
  name: string;
  passed: boolean;
  /** What went wrong, when it failed. */
  detail?: string;
}

function runCase(t: IncrementalTest): CaseResult | undefined {
  const o = t.original;
  // Kubernetes type-checks every expression before it runs, so cases of unchecked evaluation
  // (errors a checker would refuse, absorbed at run time by `||`) do not apply.
  if (PROTO_ONLY.test(o.expr) || o.container !== '' || o.disableCheck) return undefined;
  let variables: CelVariable[];
  let activation: Record<string, unknown>;
  try {
    variables = o.typeEnv.flatMap((d) => (d.declKind.case === 'ident' ? [{ name: d.name, type: d.declKind.value.type ? typeString(d.declKind.value.type as TypeMsg) : 'dyn' }] : []));
    if (o.typeEnv.some((d) => d.declKind.case === 'function')) return undefined;
    activation = {};
    for (const [name, ev] of Object.entries(o.bindings)) {
      if (ev.kind.case !== 'value') return undefined;
      activation[name] = celValue(ev.kind.value as ValueMsg);
      if (!variables.some((v) => v.name === name)) variables.push({ name, type: 'dyn' });
    }
  } catch (e) {
    if (e instanceof NotApplicable) return undefined;
    throw e;
  }
  const matcher = o.resultMatcher;
  let expected: unknown;
  try {
    if (matcher.case === 'value') expected = celValue(matcher.value as ValueMsg);
    else if (matcher.case === 'unknown' || matcher.case === 'anyUnknowns') return undefined;
  } catch (e) {
    if (e instanceof NotApplicable) return undefined;
    throw e;
  }
  const name = t.name;
  let actual: unknown;
  try {
    const env = new CelEnvironment({ variables: variables.filter((v) => !['true', 'false', 'null'].includes(v.name)), homogeneousAggregateLiterals: false });
    const program = env.compile(o.expr);
    if (o.checkOnly || matcher.case === 'typedResult') return { name, passed: true };
    actual = program.evaluate(activation).value;
  } catch (e) {
    if (!(e instanceof CelError) && !(e instanceof Error && /reserved|already registered|Invalid variable/.test(e.message))) throw e;
    const expectsError = matcher.case === 'evalError' || matcher.case === 'anyEvalErrors';
    return expectsError ? { name, passed: true } : { name, passed: false, detail: `error: ${(e as Error).message.split('\n')[0]}` };
  }
  if (matcher.case === 'evalError' || matcher.case === 'anyEvalErrors') return { name, passed: false, detail: `expected an error, got ${show(actual)}` };
  if (matcher.case === undefined) return { name, passed: actual === true, detail: actual === true ? undefined : `expected true, got ${show(actual)}` };
  const passed = sameValue(expected, actual);
  return passed ? { name, passed } : { name, passed, detail: `expected ${show(expected)}, got ${show(actual)}` };
}

function show(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x instanceof Map ? Object.fromEntries(x) : x instanceof UnsignedInt ? `${x.valueOf()}u` : x instanceof Set ? [...x] : x));
  } catch {
    return String(v);
  }
}

/** Every applicable case of the suite, by `section/subsection/name`. */
export function runConformance(): Map<string, CaseResult> {
  const results = new Map<string, CaseResult>();
  const suite: IncrementalTestSuite = getConformanceSuite();
  const visit = (s: IncrementalTestSuite, path: string) => {
    for (const t of s.tests) {
      const r = runCase(t);
      if (r) results.set(`${path}/${t.name}`, r);
    }
    for (const sub of s.suites) visit(sub, `${path}/${sub.name}`);
  };
  for (const section of suite.suites) if (!(section.name in EXCLUDED_SECTIONS)) visit(section, section.name);
  return results;
}

if (process.argv.includes('--print')) {
  const results = runConformance();
  const failed = [...results].filter(([, r]) => !r.passed);
  for (const [k, r] of failed) console.log(`${k}\t${r.detail}`);
  console.log(`applicable ${results.size}, passing ${results.size - failed.length}, failing ${failed.length}`);
}
