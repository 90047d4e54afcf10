// Kubernetes' semver library (base environment 1.33+): semver(s) and isSemver(s) — a semantic
// version 2.0.0 as Go's blang/semver parses it (no leading `v`, no leading zeros) — or, with
// `true` as second argument, normalized first (a leading `v` dropped, leading zeros removed, a
// missing minor or patch filled with 0); the members major, minor, patch, compareTo, isLessThan,
// isGreaterThan, by semver precedence (build metadata ignored).

import { celError, type Registrar } from './register.ts';

export class CelSemver {
  readonly major: bigint;
  readonly minor: bigint;
  readonly patch: bigint;
  readonly pre: readonly string[];
  constructor(major: bigint, minor: bigint, patch: bigint, pre: readonly string[]) {
    this.major = major;
    this.minor = minor;
    this.patch = patch;
    this.pre = pre;
  }
}

const NUMERIC = /^[0-9]+$/;
const IDENTIFIER = /^[0-9A-Za-z-]+$/;
const MAX_UINT64 = 2n ** 64n - 1n;

/** Go's strconv.ParseUint(text, 10, 64): the number, or undefined past uint64 (checked before any BigInt is made of a long text). */
const uint64 = (text: string): bigint | undefined => {
  if (text.length > 20) return undefined;
  const n = BigInt(text);
  return n > MAX_UINT64 ? undefined : n;
};

/** blang/semver's Parse: the version, or its error text. */
function parse(s: string): CelSemver | string {
  if (s === '') return 'Version string empty';
  // Go's SplitN(s, ".", 3): the third part keeps its dots (pre-release and build identifiers).
  const first = s.indexOf('.');
  const second = first < 0 ? -1 : s.indexOf('.', first + 1);
  if (second < 0) return 'No Major.Minor.Patch elements found';
  const major = s.slice(0, first);
  const minor = s.slice(first + 1, second);
  const rest = s.slice(second + 1);
  const build = rest.indexOf('+');
  const withPre = build < 0 ? rest : rest.slice(0, build);
  const dash = withPre.indexOf('-');
  const patch = dash < 0 ? withPre : withPre.slice(0, dash);
  const numbers: bigint[] = [];
  for (const [name, text] of [['major', major], ['minor', minor], ['patch', patch]] as const) {
    if (!NUMERIC.test(text)) return `Invalid character(s) found in ${name} number ${JSON.stringify(text)}`;
    if (text.length > 1 && text.startsWith('0')) return `${name[0]!.toUpperCase()}${name.slice(1)} number must not contain leading zeroes ${JSON.stringify(text)}`;
    const n = uint64(text);
    if (n === undefined) return `strconv.ParseUint: parsing ${JSON.stringify(text)}: value out of range`;
    numbers.push(n);
  }
  const pre = dash < 0 ? [] : withPre.slice(dash + 1).split('.');
  for (const p of pre) {
    if (p === '') return 'Prerelease is empty';
    if (!IDENTIFIER.test(p)) return `Invalid character(s) found in prerelease ${JSON.stringify(p)}`;
    if (NUMERIC.test(p) && p.length > 1 && p.startsWith('0')) return `Numeric PreRelease version must not contain leading zeroes ${JSON.stringify(p)}`;
    if (NUMERIC.test(p) && uint64(p) === undefined) return `strconv.ParseUint: parsing ${JSON.stringify(p)}: value out of range`;
  }
  if (build >= 0)
    for (const b of rest.slice(build + 1).split('.')) {
      if (b === '') return 'Build meta data is empty';
      if (!IDENTIFIER.test(b)) return `Invalid character(s) found in build meta data ${JSON.stringify(b)}`;
    }
  return new CelSemver(numbers[0]!, numbers[1]!, numbers[2]!, pre);
}

/** Kubernetes' normalizeAndParse: `v` dropped, leading zeros of the three parts removed, missing parts 0. */
function normalizeAndParse(s: string): CelSemver | string {
  const parts = (s.startsWith('v') ? s.slice(1) : s).split('.');
  // Go's SplitN(s, ".", 3).
  const head = parts.length > 3 ? [...parts.slice(0, 2), parts.slice(2).join('.')] : parts;
  const trimmed = head.map((p) => {
    if (p.length <= 1) return p;
    const t = p.replace(/^0+/, '');
    return t === '' || !/^[0-9]/.test(t) ? `0${t}` : t;
  });
  if (trimmed.length < 3) {
    if (/[+-]/.test(trimmed[trimmed.length - 1]!)) return 'short version cannot contain PreRelease/Build meta data';
    while (trimmed.length < 3) trimmed.push('0');
  }
  return parse(trimmed.join('.'));
}

/** Semver precedence: -1, 0 or 1. */
function compare(a: CelSemver, b: CelSemver): number {
  for (const k of ['major', 'minor', 'patch'] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  if (a.pre.length === 0 || b.pre.length === 0) return a.pre.length === b.pre.length ? 0 : a.pre.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i]!;
    const y = b.pre[i]!;
    if (x === y) continue;
    const xn = NUMERIC.test(x);
    const yn = NUMERIC.test(y);
    if (xn && yn) return BigInt(x) < BigInt(y) ? -1 : 1;
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.pre.length === b.pre.length ? 0 : a.pre.length < b.pre.length ? -1 : 1;
}

export function registerSemver(r: Registrar): void {
  const T = 'kubernetes.Semver';
  r.env.registerType(T, CelSemver);
  const version = (v: CelSemver | string): CelSemver => {
    if (typeof v === 'string') throw celError(v);
    return v;
  };
  r.fn(`semver(string): ${T}`, (s: string) => version(parse(s)));
  r.fn(`semver(string, bool): ${T}`, (s: string, normalize: boolean) => version(normalize ? normalizeAndParse(s) : parse(s)));
  r.fn('isSemver(string): bool', (s: string) => typeof parse(s) !== 'string');
  r.fn('isSemver(string, bool): bool', (s: string, normalize: boolean) => typeof (normalize ? normalizeAndParse(s) : parse(s)) !== 'string');
  r.fn(`${T}.major(): int`, (v: CelSemver) => v.major);
  r.fn(`${T}.minor(): int`, (v: CelSemver) => v.minor);
  r.fn(`${T}.patch(): int`, (v: CelSemver) => v.patch);
  r.fn(`${T}.compareTo(${T}): int`, (a: CelSemver, b: CelSemver) => BigInt(compare(a, b)));
  r.fn(`${T}.isLessThan(${T}): bool`, (a: CelSemver, b: CelSemver) => compare(a, b) < 0);
  r.fn(`${T}.isGreaterThan(${T}): bool`, (a: CelSemver, b: CelSemver) => compare(a, b) > 0);
  r.op(`${T} == ${T}`, (a: CelSemver, b: CelSemver) => compare(a, b) === 0);
}
