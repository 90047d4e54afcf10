// Explicit YAML tags in a request body. Kubernetes reads YAML into untyped JSON, so a tag only
// makes sense when it names a JSON type; anything else (`!!binary`, `!!set`, `!!omap`, `!!pairs`,
// application tags such as `!foo`) would be converted into something the client did not write,
// or silently lost, and is refused instead.

import { visit, type Document, type Scalar } from 'yaml';
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

/**
 * Refuse tags without a JSON meaning, and tagged values that are not of their tag's type (as
 * Kubernetes' reader does: `cannot decode !!str \`abc\` as a !!int`).
 */
export function checkYamlTags(doc: Document, what: string): void {
  const refuse = (message: string): never => {
    throw errors.badRequest(`${what}: yaml: ${message}`);
  };
  visit(doc, {
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
    },
    Seq(_key, node) {
      if (node.tag && node.tag !== '!' && !COLLECTION_TAGS.has(node.tag)) refuse(`tag ${short(node.tag)} has no JSON representation`);
    },
  });
}
