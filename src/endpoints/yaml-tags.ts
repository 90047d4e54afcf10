// Explicit YAML tags in a request body. Kubernetes reads YAML into untyped JSON, so a tag only
// makes sense when it names a JSON type; anything else (`!!binary`, `!!set`, `!!omap`, `!!pairs`,
// application tags such as `!foo`) would be converted into something the client did not write,
// or silently lost, and is refused instead.

import type { Document, Pair, Scalar } from 'yaml';
import { yaml } from '../machinery/yaml.ts';
import { errors } from '../machinery/status.ts';

const CORE = 'tag:yaml.org,2002:';
const COLLECTION_TAGS = new Set([`${CORE}map`, `${CORE}seq`]);
/** A YAML 1.1 timestamp: `!!timestamp` keeps it as the string it was written as. */
const TIMESTAMP = /^\d{4}-\d\d?-\d\d?(?:(?:[Tt]|[ \t]+)\d\d?:\d\d:\d\d(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d\d?(?::\d\d)?))?)?$/;

const short = (tag: string): string => (tag.startsWith(CORE) ? `!!${tag.slice(CORE.length)}` : tag).slice(0, 100);

/** The value a scalar with a core tag stands for, or undefined when its text is not of that type. */
function scalarValue(tag: string, node: Scalar, text: string): { value: unknown } | undefined {
  const v = node.value;
  switch (tag.slice(CORE.length)) {
    case 'str':
      return { value: v };
    case 'int':
      return typeof v === 'number' && Number.isInteger(v) ? { value: v } : undefined;
    case 'bool':
      return typeof v === 'boolean' ? { value: v } : undefined;
    case 'null':
      return v === null ? { value: v } : undefined;
    case 'float': {
      if (typeof v === 'number') return { value: v };
      const n = Number(text.replace(/_/g, ''));
      return text.trim() !== '' && Number.isFinite(n) ? { value: n } : undefined;
    }
    case 'timestamp':
      return TIMESTAMP.test(text) ? { value: text } : undefined;
  }
  return undefined;
}

/** Maps up to this size are checked for a repeated key by scanning; larger ones use a Set. */
const SMALL_MAP = 8;

/**
 * Whether a map repeats a key, as the YAML library's `uniqueKeys` check compares them: scalar keys
 * by their resolved value with `===` (so NaN never repeats), other keys only by identity, which
 * distinct nodes never share. The library's own check scans every earlier key of the map for
 * each key, quadratic in the map's size; this is linear.
 */
function repeatsKey(items: readonly Pair[]): boolean {
  const { isScalar } = yaml();
  if (items.length <= SMALL_MAP) {
    for (let i = 1; i < items.length; i++) {
      const a = items[i]!.key;
      if (!isScalar(a)) continue;
      for (let j = 0; j < i; j++) {
        const b = items[j]!.key;
        if (isScalar(b) && a.value === b.value) return true;
      }
    }
    return false;
  }
  const seen = new Set<unknown>();
  for (const pair of items) {
    const key = pair.key;
    if (!isScalar(key) || Number.isNaN(key.value)) continue;
    if (seen.has(key.value)) return true;
    seen.add(key.value);
  }
  return false;
}

/**
 * Refuse tags without a JSON meaning, and tagged values that are not of their tag's type (as
 * Kubernetes' reader does: `cannot decode !!str \`abc\` as a !!int`). Returns whether any map
 * repeats a key (looked for only when `duplicates` is set), in the same walk: keys are compared
 * before tag checks rewrite any value, as a parse with `uniqueKeys` would compare them.
 */
export function checkYamlTags(doc: Document, what: string, duplicates = false): boolean {
  const refuse = (message: string): never => {
    throw errors.badRequest(`${what}: yaml: ${message}`);
  };
  let repeated = false;
  yaml().visit(doc, {
    Scalar(_key, node) {
      const tag = node.tag;
      if (!tag || tag === '!') return;
      if (!tag.startsWith(CORE) || !['str', 'int', 'bool', 'null', 'float', 'timestamp'].includes(tag.slice(CORE.length))) refuse(`tag ${short(tag)} has no JSON representation`);
      const text = String(node.source ?? node.value);
      const resolved = scalarValue(tag, node, text);
      if (!resolved) refuse(`cannot decode !!str \`${text.slice(0, 100)}\` as a ${short(tag)}`);
      else node.value = resolved.value;
    },
    Map(_key, node) {
      if (node.tag && node.tag !== '!' && !COLLECTION_TAGS.has(node.tag)) refuse(`tag ${short(node.tag)} has no JSON representation`);
      if (duplicates && !repeated && repeatsKey(node.items as Pair[])) repeated = true;
    },
    Seq(_key, node) {
      if (node.tag && node.tag !== '!' && !COLLECTION_TAGS.has(node.tag)) refuse(`tag ${short(node.tag)} has no JSON representation`);
    },
  });
  return repeated;
}
