// JSON Patch (RFC 6902, atomic, with `test`) and JSON Merge Patch (RFC 7386) on plain JSON values,
// and the bounds every patch result is held to before it is decoded further.
//
// JSON patches are applied here rather than by a library, so that what one patch may allocate is
// bounded while it is applied: as kube-apiserver (evanphx/json-patch with AccumulatedCopySizeLimit),
// the bytes the `copy` operations of one patch add up to are bounded, and the operation that
// passes the bound stops the patch before its value is cloned. Every walk is iterative: a patch
// may build nesting far deeper than a request body may have, until its result is refused.

import { errors, StatusError } from './status.ts';
import { isPlainObject } from './meta.ts';

/** kube-apiserver's maxJSONPatchOperations. */
const MAX_JSON_PATCH_OPERATIONS = 10_000;

/**
 * Array elements the operations of one patch may shift in all (an insertion or removal before the
 * end of an array moves the elements after it). kube-apiserver has no such bound, but there each
 * request has its own goroutine: here 10,000 insertions at the front of an array of 270,000 items
 * would hold every client for seconds. This many shifts take a tenth to a quarter of a second.
 */
const MAX_ARRAY_SHIFTS = 128 * 1024 * 1024;

/** As deep as a decoded request body may nest: a patch result deeper than that is refused. */
const MAX_PATCHED_DEPTH = 1000;

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

type Container = Record<string, unknown> | unknown[];

/** A patch that decodes but cannot be applied: kube-apiserver answers 422 (jsonPatcher.applyJSPatch). */
function invalid(detail: string): StatusError {
  return new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: ${detail}`, {});
}

const malformed = (why: string) => errors.badRequest(`the server rejected our request due to an error in our request: ${why}`);

const own = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

/** An own data property, whatever the key (`__proto__` included, which plain assignment would not create). */
function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  else o[key] = value;
}

/** RFC 6901: `/a/b~1c` → ["a", "b/c"]; `""` is the whole document. */
function parsePointer(pointer: string, op: string, field: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw invalid(`${op} operation does not apply: ${field} "${pointer}" is not a JSON pointer`);
  const tokens = pointer.slice(1).split('/');
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!t.includes('~')) continue;
    if (/~(?![01])/.test(t)) throw invalid(`${op} operation does not apply: ${field} "${pointer}" has an invalid escape`);
    tokens[i] = t.replace(/~1/g, '/').replace(/~0/g, '~');
  }
  return tokens;
}

/** An array index as RFC 6901 spells it (no sign, no leading zero), or -1. */
function arrayIndex(token: string): number {
  return /^(0|[1-9][0-9]{0,15})$/.test(token) ? Number(token) : -1;
}

/** The container that holds the value at `tokens` (which must exist up to the last token). */
function parentOf(doc: unknown, tokens: readonly string[], op: string, pointer: string): Container {
  let at: unknown = doc;
  for (let i = 0; i < tokens.length - 1; i++) {
    const t = tokens[i]!;
    if (Array.isArray(at)) {
      const idx = arrayIndex(t);
      at = idx >= 0 && idx < at.length ? at[idx] : undefined;
    } else if (isPlainObject(at)) {
      at = own(at, t) ? at[t] : undefined;
    } else at = undefined;
    if (at === undefined) break;
  }
  if (!Array.isArray(at) && !isPlainObject(at)) throw invalid(`${op} operation does not apply: doc is missing path: "${pointer}"`);
  return at;
}

/** The value at `tokens`, or undefined when there is none. */
function valueAt(doc: unknown, tokens: readonly string[], op: string, pointer: string): unknown {
  if (tokens.length === 0) return doc;
  const parent = parentOf(doc, tokens, op, pointer);
  const key = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const idx = arrayIndex(key);
    return idx >= 0 && idx < parent.length ? parent[idx] : undefined;
  }
  return own(parent, key) ? parent[key] : undefined;
}

/** The work a patch has done that its size does not bound: array elements shifted so far. */
interface Work {
  shifted: number;
}

/** Count `n` more shifted array elements; past MAX_ARRAY_SHIFTS the patch is refused. */
function shift(work: Work, n: number): void {
  work.shifted += n;
  if (work.shifted > MAX_ARRAY_SHIFTS)
    throw new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: the JSON patch shifts more than ${MAX_ARRAY_SHIFTS} array elements in all`);
}

/** RFC 6902 add: into an array at an index up to its length (or `-`, its end), or an object member. */
function addAt(parent: Container, key: string, value: unknown, op: string, pointer: string, work: Work): void {
  if (Array.isArray(parent)) {
    const idx = key === '-' ? parent.length : arrayIndex(key);
    if (idx < 0) throw invalid(`error in ${op} for path: '${pointer}': value was not a proper array index: '${key}'`);
    if (idx > parent.length) throw invalid(`error in ${op} for path: '${pointer}': Unable to access invalid index: ${idx}: invalid index referenced`);
    if (idx === parent.length) parent.push(value);
    else {
      shift(work, parent.length - idx);
      parent.splice(idx, 0, value);
    }
    return;
  }
  setOwn(parent, key, value);
}

/** Remove and return the value at `key`; it must exist. */
function removeAt(parent: Container, key: string, op: string, pointer: string, work: Work): unknown {
  if (Array.isArray(parent)) {
    const idx = arrayIndex(key);
    if (idx < 0 || idx >= parent.length) throw invalid(`error in ${op} for path: '${pointer}': Unable to access invalid index: ${key}: invalid index referenced`);
    if (idx === parent.length - 1) return parent.pop();
    shift(work, parent.length - idx - 1);
    return parent.splice(idx, 1)[0];
  }
  if (!own(parent, key)) throw invalid(`error in ${op} for path: '${pointer}': Unable to remove nonexistent key: ${key}: missing value`);
  const v = parent[key];
  delete parent[key];
  return v;
}

/** A deep copy of a JSON value, without recursion (two stacks side by side: no pair allocated per node). */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  const fresh = (v: object): Container => (Array.isArray(v) ? new Array<unknown>(v.length) : {});
  const root = fresh(value);
  const from: Container[] = [value as Container];
  const to: Container[] = [root];
  while (from.length) {
    const src = from.pop()!;
    const dst = to.pop()!;
    if (Array.isArray(src)) {
      const out = dst as unknown[];
      for (let i = 0; i < src.length; i++) {
        const v = src[i];
        if (typeof v === 'object' && v !== null) {
          const c = fresh(v);
          out[i] = c;
          from.push(v as Container);
          to.push(c);
        } else out[i] = v;
      }
    } else {
      const out = dst as Record<string, unknown>;
      for (const k of Object.keys(src)) {
        const v = src[k];
        if (typeof v === 'object' && v !== null) {
          const c = fresh(v);
          setOwn(out, k, c);
          from.push(v as Container);
          to.push(c);
        } else setOwn(out, k, v);
      }
    }
  }
  return root as T;
}

/** JSON equality (RFC 6902 `test`), without recursion. */
function jsonEqual(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
      continue;
    }
    if (Array.isArray(y)) return false;
    const xo = x as Record<string, unknown>;
    const yo = y as Record<string, unknown>;
    const keys = Object.keys(xo);
    if (keys.length !== Object.keys(yo).length) return false;
    for (const k of keys) {
      if (!own(yo, k)) return false;
      stack.push([xo[k], yo[k]]);
    }
  }
  return true;
}

/** The UTF-8 length of a string: counted here when short (a native call costs more), natively when long. */
function utf8Length(s: string): number {
  if (s.length > 32) return Buffer.byteLength(s, 'utf8');
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // Two more bytes for U+0800 and above, one for U+0080 to U+07FF; a surrogate pair is four in all.
    if (c >= 0x80) n += c >= 0x800 && (c < 0xd800 || c > 0xdfff) ? 2 : 1;
  }
  return n;
}

/**
 * The size of a value written as compact JSON (strings counted without their escapes) and its
 * nesting depth; the walk stops as soon as the size passes `maxBytes` or the depth `maxDepth`, so
 * it costs no more than the bound however large the value.
 */
export function measureJson(value: unknown, maxBytes: number, maxDepth = Infinity): { bytes: number; depth: number } {
  let bytes = 0;
  let depth = 0;
  // Values and their depths, side by side.
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length) {
    const v = values.pop();
    const d = depths.pop()!;
    if (typeof v === 'string') bytes += utf8Length(v) + 2;
    else if (typeof v === 'number') bytes += String(v).length;
    else if (typeof v === 'boolean') bytes += v ? 4 : 5;
    else if (typeof v !== 'object' || v === null) bytes += 4;
    else {
      if (d + 1 > depth) depth = d + 1;
      if (Array.isArray(v)) {
        bytes += 2 + Math.max(0, v.length - 1);
        for (let i = v.length - 1; i >= 0; i--) {
          values.push(v[i]);
          depths.push(d + 1);
        }
      } else {
        // (for…in allocates nothing: a list of keys per object is garbage for the collector to chase.)
        let keys = 0;
        for (const k in v) {
          if (!Object.hasOwn(v, k)) continue;
          keys++;
          bytes += utf8Length(k) + 3;
          values.push((v as Record<string, unknown>)[k]);
          depths.push(d + 1);
        }
        bytes += 1 + Math.max(1, keys);
      }
    }
    if (bytes > maxBytes || depth > maxDepth) break;
  }
  return { bytes, depth };
}

interface JsonPatchOptions {
  /** The bytes all `copy` operations of the patch may add up to (kube-apiserver: JSONPatchMaxCopyBytes, 3 MiB). */
  maxCopyBytes: number;
  /**
   * The document and the patch are the caller's to give away (its own copies): the document is
   * changed in place and the patch's values become part of it, nothing copied but what `copy`
   * operations duplicate. Otherwise neither is changed.
   */
  consume?: boolean;
}

interface Operation {
  op: string;
  path: string;
  tokens: string[];
  from?: string;
  fromTokens?: string[];
  value?: unknown;
  hasValue: boolean;
}

/** Every operation's shape, checked before any is applied. */
function parseOperations(patch: unknown[]): Operation[] {
  const ops: Operation[] = [];
  for (const raw of patch) {
    if (!isPlainObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') throw malformed('invalid JSON Patch operation');
    const { op, path } = raw;
    if (!OPS.has(op)) throw invalid(`Unexpected kind: ${op}`);
    const o: Operation = { op, path, tokens: parsePointer(path, op, 'path'), hasValue: own(raw, 'value') };
    if (op === 'add' || op === 'replace' || op === 'test') {
      if (!o.hasValue) throw invalid(`${op} operation failed to decode value: operation, missing value field: missing value`);
      o.value = raw.value;
    }
    if (op === 'move' || op === 'copy') {
      if (typeof raw.from !== 'string') throw invalid(`${op} operation failed to decode from: operation, missing from field: missing value`);
      o.from = raw.from;
      o.fromTokens = parsePointer(raw.from, op, 'from');
    }
    ops.push(o);
  }
  return ops;
}

/**
 * Apply a JSON Patch document. A patch that is not a list of operations is 400, more than 10,000
 * operations 413; an operation RFC 6902 calls an error (a missing path or `from`, an index past an
 * array's end, a failed `test`) and copies past `maxCopyBytes` are 422. Neither `doc` nor `patch`
 * is changed unless `options.consume` gives them away.
 */
export function applyJsonPatch(doc: unknown, patch: unknown, options: JsonPatchOptions): unknown {
  if (!Array.isArray(patch)) throw malformed('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  if (patch.length > MAX_JSON_PATCH_OPERATIONS)
    throw new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`);
  const ops = parseOperations(patch);
  // A value the patch gives is cloned unless the patch is given away (it stays intact for a retry).
  const own = options.consume ? (v: unknown) => v : cloneJson;
  let result = options.consume ? doc : cloneJson(doc);
  let copied = 0;
  const work: Work = { shifted: 0 };
  for (const o of ops) {
    const { op, path, tokens } = o;
    const last = tokens[tokens.length - 1]!;
    switch (op) {
      case 'add':
        if (tokens.length === 0) result = own(o.value);
        else addAt(parentOf(result, tokens, op, path), last, own(o.value), op, path, work);
        break;
      case 'remove':
        if (tokens.length === 0) throw invalid(`remove operation does not apply: doc is missing path: "${path}"`);
        removeAt(parentOf(result, tokens, op, path), last, op, path, work);
        break;
      case 'replace': {
        if (tokens.length === 0) {
          result = own(o.value);
          break;
        }
        const parent = parentOf(result, tokens, op, path);
        if (valueAt(result, tokens, op, path) === undefined) throw invalid(`replace operation does not apply: doc is missing key: ${path}: missing value`);
        if (Array.isArray(parent)) parent[arrayIndex(last)] = own(o.value);
        else setOwn(parent, last, own(o.value));
        break;
      }
      case 'test':
        if (!jsonEqual(valueAt(result, tokens, op, path), o.value)) throw invalid(`testing value ${path} failed`);
        break;
      case 'move': {
        const from = o.fromTokens!;
        if (from.length < tokens.length && from.every((t, i) => t === tokens[i]))
          throw invalid(`move operation does not apply: from "${o.from}" is a prefix of path "${path}"`);
        if (from.length === 0) break; // moving the document onto itself
        const value = removeAt(parentOf(result, from, op, o.from!), from[from.length - 1]!, op, o.from!, work);
        if (tokens.length === 0) result = value;
        else addAt(parentOf(result, tokens, op, path), last, value, op, path, work);
        break;
      }
      case 'copy': {
        const value = valueAt(result, o.fromTokens!, op, o.from!);
        if (value === undefined) throw invalid(`copy operation does not apply: doc is missing from path: ${o.from}`);
        // Counted before the clone exists: the walk stops at what is left of the budget.
        copied += measureJson(value, options.maxCopyBytes - copied).bytes;
        if (copied > options.maxCopyBytes)
          throw invalid(`Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${options.maxCopyBytes}`);
        if (tokens.length === 0) result = cloneJson(value);
        else addAt(parentOf(result, tokens, op, path), last, cloneJson(value), op, path, work);
        break;
      }
    }
  }
  return result;
}

/**
 * The object as a client could send it: without `metadata.managedFields`, the server's own
 * bookkeeping, which can be as large as the fields it tracks. A stored object may therefore be
 * larger than a request body, and any object a client could PUT it can also patch to.
 */
function withoutManagedFields(value: unknown): unknown {
  if (!isPlainObject(value) || !isPlainObject(value.metadata) || !('managedFields' in value.metadata)) return value;
  const { managedFields: _, ...metadata } = value.metadata;
  return { ...value, metadata };
}

/**
 * A patch result, whatever the patch type, is at most `maxBytes` as JSON without its managedFields
 * (413, the request-body limit's Status, as kube-apiserver refuses what etcd would not store) and
 * nests no deeper than a request body may (422), before it is decoded, validated or stored.
 */
export function checkPatchResult(value: unknown, maxBytes: number): void {
  const { bytes, depth } = measureJson(withoutManagedFields(value), maxBytes, MAX_PATCHED_DEPTH);
  if (depth > MAX_PATCHED_DEPTH) throw invalid(`the patched object exceeds the maximum depth of ${MAX_PATCHED_DEPTH}`);
  if (bytes > maxBytes) throw errors.entityTooLarge(maxBytes);
}

/**
 * RFC 7386: objects merge recursively, null deletes, anything else replaces (with a copy of the
 * patch's value). With `consume`, the target and the patch are the caller's to give away: the
 * target's objects are changed in place and the patch's values become part of it, uncopied.
 */
export function applyMergePatch(target: unknown, patch: unknown, consume = false): unknown {
  if (!isPlainObject(patch)) return consume ? patch : cloneJson(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? (consume ? target : { ...target }) : {};
  for (const k in patch) {
    if (k === '__proto__' || !Object.hasOwn(patch, k)) continue;
    const v = patch[k];
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v, consume);
  }
  return out;
}
