// Validation rules of a schema node (`x-kubernetes-validations`), compiled once when the kind is
// defined, as Kubernetes compiles a custom resource's rules (apiextensions' cel/compilation.go):
//
// - `rule` in the node's RuleEnvironment (`self`, and `oldSelf` of the same type); it must
//   evaluate to a bool. A rule that names `oldSelf` is a transition rule. With `optionalOldSelf`
//   the rule is compiled with `oldSelf` an optional, so it also runs where no old value exists.
// - `messageExpression` in the same environment; it must evaluate to a string.
// - `fieldPath` a relative path from the node through its properties and map keys
//   (`.spec.replicas`, `.labels['a.b']`), normalized to the form field errors print.
// - `reason` one of the four field error types a rule may report.
//
// The result is cached on the schema object, and by the node's content. A definition with a bad
// rule is refused with RuleDefinitionError, naming every problem found.

import { createHash } from 'node:crypto';
import type { Schema, ValidationRule } from '../machinery/schema.ts';
import type { CelProgram } from './environment.ts';
import { CelCompileError } from './errors.ts';
import { RuleEnvironment } from './schema.ts';

/** A rule ready to run at its node. */
export interface CompiledRule {
  readonly rule: ValidationRule;
  /** The environment the rule (and its message expression) was compiled in: activation builds its variables. */
  readonly env: RuleEnvironment;
  readonly program: CelProgram;
  readonly messageProgram?: CelProgram;
  /** A transition rule: it names `oldSelf`. */
  readonly usesOldSelf: boolean;
  /** `fieldPath` normalized (`spec.replicas`, `labels[a.b]`); '' when the rule has none. */
  readonly fieldPath: string;
}

/** The rules of a definition are wrong: each problem as `<schema path>.x-kubernetes-validations[i].<field>: <why>`. */
export class RuleDefinitionError extends Error {
  readonly problems: string[];
  override name = 'RuleDefinitionError';
  constructor(problems: string[]) {
    super(problems.join('; '));
    this.problems = problems;
  }
}

export const RULE_REASONS: readonly string[] = ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'];

const cache = new WeakMap<Schema, { root: boolean; rules: CompiledRule[] }[]>();

/**
 * Compiled rules by the content of their node (a digest of its JSON) and whether it is a
 * resource's root: a node written again (the CRD validated when written, then served; the same
 * type repeated across a group's CRDs; a restart) compiles its rules once. Least recently used
 * first; bounded, as each entry holds its environments.
 */
const byContent = new Map<string, CompiledRule[]>();
const BY_CONTENT_CAPACITY = 1024;

function contentKey(schema: Schema, root: boolean): string {
  return `${root ? 'r' : 'n'}${createHash('sha256').update(JSON.stringify(schema)).digest('base64')}`;
}

/**
 * The compiled rules of one schema node (an empty list when it has none). `resourceRoot`: the node
 * is a resource's root or an embedded resource (its `metadata.name` is declared). `at` names the
 * node in error messages. Throws RuleDefinitionError.
 */
export function compileRules(schema: Schema, options: { resourceRoot?: boolean; at?: string } = {}): CompiledRule[] {
  const rules = schema['x-kubernetes-validations'];
  if (!rules || rules.length === 0) return [];
  const root = options.resourceRoot === true;
  const entries = cache.get(schema) ?? [];
  const hit = entries.find((e) => e.root === root);
  if (hit) return hit.rules;
  const key = contentKey(schema, root);
  const same = byContent.get(key);
  if (same) {
    byContent.delete(key);
    byContent.set(key, same);
    entries.push({ root, rules: same });
    cache.set(schema, entries);
    return same;
  }
  const at = options.at ?? '<root>';
  const problems: string[] = [];
  const envs = new Map<boolean, RuleEnvironment>();
  const envFor = (optionalOldSelf: boolean): RuleEnvironment => {
    let env = envs.get(optionalOldSelf);
    if (!env) envs.set(optionalOldSelf, (env = new RuleEnvironment(schema, { resourceRoot: root, optionalOldSelf })));
    return env;
  };
  const compiled: CompiledRule[] = [];
  rules.forEach((r, i) => {
    const where = `${at}.x-kubernetes-validations[${i}]`;
    const before = problems.length;
    if (typeof r.rule !== 'string' || r.rule.trim() === '') problems.push(`${where}.rule: Required value`);
    if (r.reason !== undefined && !RULE_REASONS.includes(r.reason)) problems.push(`${where}.reason: Unsupported value: ${JSON.stringify(r.reason)}: supported values: ${RULE_REASONS.map((x) => JSON.stringify(x)).join(', ')}`);
    if (r.message !== undefined && r.message.trim() === '') problems.push(`${where}.message: Invalid value: ${JSON.stringify(r.message)}: message must be non-empty if specified`);
    if (r.message !== undefined && /[\n\r]/.test(r.message)) problems.push(`${where}.message: Invalid value: ${JSON.stringify(r.message)}: message must not contain line breaks`);
    let fieldPath = '';
    if (r.fieldPath !== undefined) {
      try {
        fieldPath = normalizeFieldPath(r.fieldPath, schema);
      } catch (e) {
        problems.push(`${where}.fieldPath: Invalid value: ${JSON.stringify(r.fieldPath)}: fieldPath must be a valid path: ${(e as Error).message}`);
      }
    }
    if (problems.length > before) return;
    const usesOldSelf = referencesIdentifier(r.rule, 'oldSelf');
    if (r.optionalOldSelf === true && !usesOldSelf) {
      problems.push(`${where}.optionalOldSelf: Forbidden: may not be set if oldSelf is not used in rule`);
      return;
    }
    const env = envFor(r.optionalOldSelf === true);
    let program: CelProgram;
    try {
      program = env.env.compile(r.rule);
    } catch (e) {
      if (!(e instanceof CelCompileError)) throw e;
      problems.push(`${where}.rule: Invalid value: ${JSON.stringify(r.rule)}: compilation failed: ${e.message}`);
      return;
    }
    if (program.outputType !== 'bool') {
      problems.push(`${where}.rule: Invalid value: ${JSON.stringify(r.rule)}: cel expression must evaluate to a bool`);
      return;
    }
    let messageProgram: CelProgram | undefined;
    if (r.messageExpression !== undefined) {
      try {
        messageProgram = env.env.compile(r.messageExpression);
      } catch (e) {
        if (!(e instanceof CelCompileError)) throw e;
        problems.push(`${where}.messageExpression: Invalid value: ${JSON.stringify(r.messageExpression)}: messageExpression compilation failed: ${e.message}`);
        return;
      }
      if (messageProgram.outputType !== 'string') {
        problems.push(`${where}.messageExpression: Invalid value: ${JSON.stringify(r.messageExpression)}: must evaluate to a string`);
        return;
      }
    }
    compiled.push({ rule: r, env, program, messageProgram, usesOldSelf, fieldPath });
  });
  if (problems.length > 0) throw new RuleDefinitionError(problems);
  entries.push({ root, rules: compiled });
  cache.set(schema, entries);
  if (byContent.size >= BY_CONTENT_CAPACITY) byContent.delete(byContent.keys().next().value!);
  byContent.set(key, compiled);
  return compiled;
}

/**
 * Whether an expression names a variable: an identifier outside string and bytes literals and
 * comments, not selected as a field (`x.oldSelf` is a field).
 */
export function referencesIdentifier(expression: string, name: string): boolean {
  const s = expression;
  let i = 0;
  let previous = '';
  while (i < s.length) {
    const c = s[i]!;
    if (c === '/' && s[i + 1] === '/') {
      while (i < s.length && s[i] !== '\n') i++;
      continue;
    }
    const literal = /^[rRbB]{0,2}("""|'''|"|')/.exec(s.slice(i, i + 5));
    if (literal && (literal[0].length === literal[1]!.length || !/[\w]/.test(previous))) {
      const quote = literal[1]!;
      const raw = /[rR]/.test(literal[0].slice(0, -quote.length));
      i += literal[0].length;
      while (i < s.length && !s.startsWith(quote, i)) i += s[i] === '\\' && !raw ? 2 : 1;
      i += quote.length;
      previous = quote;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i));
    if (id) {
      if (id[0] === name && previous !== '.') return true;
      i += id[0].length;
      previous = 'a';
      continue;
    }
    if (!/\s/.test(c)) previous = c;
    i++;
  }
  return false;
}

/**
 * A rule's fieldPath checked against its node's schema and normalized as Kubernetes prints it:
 * `.a.b` → `a.b`, `.labels['x.y']` → `labels[x.y]`, `['a']` on an object → `a`. Only properties
 * and map keys may be named (no list positions). Throws an Error saying what is wrong.
 */
export function normalizeFieldPath(path: string, schema: Schema): string {
  const tokens: string[] = [];
  for (let i = 0; i < path.length; ) {
    const c = path[i]!;
    if (c === '.' || c === '[' || c === ']') {
      tokens.push(c);
      i++;
    } else if (c === "'") {
      let j = i + 1;
      while (j < path.length && !(path[j] === "'" && path[j - 1] !== '\\')) j++;
      tokens.push(path.slice(i, j + 1));
      i = j + 1;
    } else {
      let j = i;
      while (j < path.length && !'.[]'.includes(path[j]!)) j++;
      tokens.push(path.slice(i, j));
      i = j;
    }
  }
  let out = '';
  let node: Schema | undefined = schema;
  const step = (name: string): void => {
    if (node?.properties && Object.keys(node.properties).length > 0) {
      const next: Schema | undefined = node.properties[name];
      if (!next) throw new Error('does not refer to a valid field');
      out = out ? `${out}.${name}` : name;
      node = next;
    } else if (node?.additionalProperties) {
      out = `${out}[${name}]`;
      node = node.additionalProperties;
    } else throw new Error('does not refer to a valid field');
  };
  for (let t = 0; t < tokens.length; t++) {
    const tok = tokens[t]!;
    if (tok === '.') {
      const name = tokens[++t];
      if (name === undefined) throw new Error('unexpected end of JSON path');
      step(name);
    } else if (tok === '[') {
      const quoted = tokens[++t];
      if (quoted === undefined) throw new Error('unexpected end of JSON path');
      if (quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'")) throw new Error(`expected single quoted string but got ${quoted}`);
      step(unescapeSingleQuoted(quoted.slice(1, -1)));
      const close = tokens[++t];
      if (close === undefined) throw new Error('unexpected end of JSON path');
      if (close !== ']') throw new Error(`expected ] but got ${close}`);
    } else throw new Error(`expected [ or . but got: ${tok}`);
  }
  return out;
}

const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' };

function unescapeSingleQuoted(s: string): string {
  return s.replace(/\\(.)/g, (m, c: string) => {
    const r = ESCAPES[c];
    if (r === undefined) throw new Error(`invalid string literal: invalid escape char ${m}`);
    return r;
  });
}
