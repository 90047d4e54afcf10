// Kubernetes' format library (base environment 1.31+): named string validations a rule or its
// messageExpression can apply — `format.dns1123Label().validate(self)` is optional.none() for a
// valid string, else the list of what is wrong, in Kubernetes' words; `format.named(name)` looks
// one up by name (optional.none() for an unknown name).

import { Optional } from '@marcbachmann/cel-js';
import { dns1035Label, dns1123Label, dns1123Subdomain, labelValue, qualifiedName } from '../../machinery/meta.ts';
import { formatProblem } from '../../machinery/schema-formats.ts';
import { parseURL } from './urls.ts';
import type { Registrar } from './register.ts';

export class CelFormat {
  readonly name: string;
  readonly check: (s: string) => string[];
  /** The length of the pattern Kubernetes prices a validation with (its cost estimate). */
  readonly maxRegexSize: number;
  constructor(name: string, check: (s: string) => string[], maxRegexSize: number) {
    this.name = name;
    this.check = check;
    this.maxRegexSize = maxRegexSize;
  }
}

/** Kubernetes' maskTrailingDash: a prefix may end in a dash (its last two characters become `a`). */
const masked = (s: string): string => (s.length > 1 && s.endsWith('-') ? `${s.slice(0, -2)}a` : s);

const failing = (ok: (s: string) => boolean, message: string) => (s: string) => (ok(s) ? [] : [message]);

/** strfmt's date-time pattern's length: Kubernetes estimates date and date-time validations with it. */
const DATE_TIME_PATTERN_LENGTH = 90;

const FORMATS: Record<string, CelFormat> = {
  dns1123Label: new CelFormat('DNS1123Label', dns1123Label, 30),
  dns1123Subdomain: new CelFormat('DNS1123Subdomain', dns1123Subdomain, 60),
  dns1035Label: new CelFormat('DNS1035Label', dns1035Label, 30),
  qualifiedName: new CelFormat('QualifiedName', qualifiedName, 60),
  dns1123LabelPrefix: new CelFormat('DNS1123LabelPrefix', (s) => dns1123Label(masked(s)), 30),
  dns1123SubdomainPrefix: new CelFormat('DNS1123SubdomainPrefix', (s) => dns1123Subdomain(masked(s)), 60),
  dns1035LabelPrefix: new CelFormat('DNS1035LabelPrefix', (s) => dns1035Label(masked(s)), 30),
  labelValue: new CelFormat('LabelValue', labelValue, 40),
  uri: new CelFormat(
    'URI',
    (s) => {
      const u = parseURL(s);
      return typeof u === 'string' ? [u] : [];
    },
    1103,
  ),
  uuid: new CelFormat('uuid', failing((s) => !formatProblem('uuid', s), 'does not match the UUID format'), 87),
  byte: new CelFormat('byte', failing((s) => !formatProblem('byte', s), 'invalid base64'), 84),
  date: new CelFormat('date', failing((s) => !formatProblem('date', s), 'invalid date'), DATE_TIME_PATTERN_LENGTH),
  datetime: new CelFormat('datetime', failing((s) => !formatProblem('date-time', s), 'invalid datetime'), DATE_TIME_PATTERN_LENGTH),
};

export function registerFormat(r: Registrar): void {
  const T = 'kubernetes.NamedFormat';
  r.env.registerType(T, CelFormat);
  class FormatNamespace {}
  r.env.registerType('FormatNamespace', FormatNamespace);
  r.env.registerConstant('format', 'FormatNamespace', new FormatNamespace());
  for (const [name, f] of Object.entries(FORMATS)) r.fn(`FormatNamespace.${name}(): ${T}`, () => f);
  r.fn(`FormatNamespace.named(string): optional<${T}>`, (_ns: unknown, name: string) => (Object.hasOwn(FORMATS, name) ? Optional.of(FORMATS[name]) : Optional.none()));
  r.op(`${T} == ${T}`, (a: CelFormat, b: CelFormat) => a.name === b.name);
  r.fn(`${T}.validate(string): optional<list<string>>`, (f: CelFormat, s: string) => {
    const problems = f.check(s);
    return problems.length ? Optional.of(problems) : Optional.none();
  });
}
