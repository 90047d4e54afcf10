// The opaque `continue` token of chunked lists: unpadded base64url of
// {"v":"<meta group>/v1","rv":<list revision>,"start":"<key after the resource prefix>"}. The list
// revision is carried so every chunk reads the same snapshot.

import { errors } from './status.ts';

interface ContinuePosition {
  /** The revision of the first chunk. */
  revision: number;
  /** The first key of the next chunk, relative to the list prefix. */
  start: string;
}

export function encodeContinue(metaGroup: string, pos: ContinuePosition): string {
  return Buffer.from(JSON.stringify({ v: `${metaGroup}/v1`, rv: pos.revision, start: pos.start })).toString('base64url');
}

/** Decode a client's token; any malformation is a 400 (never trust a client's key). */
export function decodeContinue(metaGroup: string, token: string): ContinuePosition {
  const bad = (why: string) => errors.badRequest(`invalid continue token: ${why}`);
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(token)) throw bad('illegal base64 data');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw bad('invalid character in token');
  }
  if (typeof parsed !== 'object' || parsed === null) throw bad('not an object');
  const { v, rv, start } = parsed as Record<string, unknown>;
  if (v !== `${metaGroup}/v1`) throw bad(`unsupported token version ${JSON.stringify(v)}`);
  if (typeof rv !== 'number' || !Number.isSafeInteger(rv) || rv <= 0) throw bad('incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof start !== 'string' || start === '') throw bad('encoded start key empty');
  // The start key is appended to the list prefix: it must not climb out of it.
  if (start.split('/').some((seg) => seg === '..' || seg === '.') || start.startsWith('/')) throw bad('continue key is not valid');
  return { revision: rv, start };
}
