// Content negotiation: which representation a response uses (Accept) and how a request body is
// encoded (Content-Type), including conversions to Table and PartialObjectMetadata.

import { errors } from '../machinery/status.ts';

/** The encodings a response body can have: protobuf in whichever spelling the client used. */
export type ResponseMediaType = 'application/json' | 'application/yaml' | 'protobuf' | 'application/cbor';

interface MediaType {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

function parseMediaType(text: string): MediaType | undefined {
  const [full, ...rest] = text.split(';');
  const [type, subtype] = (full ?? '').trim().toLowerCase().split('/');
  if (!type || !subtype) return undefined;
  const params: Record<string, string> = {};
  let q = 1;
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const k = p.slice(0, eq).trim().toLowerCase();
    const v = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
    if (k === 'q') q = Number.isFinite(Number(v)) ? Number(v) : 0;
    else params[k] = v;
  }
  return { type, subtype, params, q };
}

/** Every entry of the Accept header parses and has quality 0: the client accepts nothing. */
function refusesAll(header: string | undefined): boolean {
  if (!header?.trim()) return false;
  const all = header.split(',').map(parseMediaType);
  return all.every((m) => m !== undefined && m.q <= 0);
}

/** The Accept header's entries, best first (stable for equal quality). */
export function parseAccept(header: string | undefined): MediaType[] {
  if (!header) return [];
  return header
    .split(',')
    .map(parseMediaType)
    .filter((m): m is MediaType => m !== undefined && m.q > 0)
    .map((m, i) => ({ m, i }))
    .sort((a, b) => b.m.q - a.m.q || a.i - b.i)
    .map(({ m }) => m);
}

const SUPPORTED_RESPONSE_TYPES = ['application/json', 'application/yaml'] as const;
/** Watch streams need a framing: YAML has none, as in kube-apiserver. */
const SUPPORTED_STREAM_TYPES = ['application/json'] as const;


/** A conversion the client asked for with `;as=<Kind>;g=<group>;v=<version>`. */
export interface Conversion {
  kind: 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';
  /** `<meta group as the client spelled it>/<v1|v1beta1>`: the apiVersion of the converted object. */
  apiVersion: string;
}

export interface ResponseFormat {
  mediaType: ResponseMediaType;
  convert?: Conversion;
  /** For protobuf: the media type as the client spelled it, which the answer's Content-Type echoes. */
  protobufType?: string;
}

const CONVERSION_KINDS = new Set(['Table', 'PartialObjectMetadata', 'PartialObjectMetadataList']);
const CONVERSION_VERSIONS = new Set(['v1', 'v1beta1']);

/** The spelling in `spellings` that `m` names (type/subtype), if any. */
function spelledAs(m: MediaType, spellings: readonly string[] | undefined): string | undefined {
  if (!spellings) return undefined;
  const name = `${m.type}/${m.subtype}`;
  return spellings.find((s) => s === name);
}

/**
 * Pick the response format; 406 when the client accepts nothing the server can produce.
 * `conversions` lists the spellings of the meta group when the endpoint offers Table and
 * PartialObjectMetadata (reads: get, list, watch); an entry asking for a conversion the endpoint
 * does not offer is skipped, so a client can list fallbacks. Protobuf media types and meta groups
 * come as lists of accepted spellings (the profile's first); the answer uses the one asked for.
 */
export function negotiateResponse(
  accept: string | undefined,
  /** The meta group's spellings, and the protobuf media types for PartialObjectMetadata in protobuf. */
  conversions?: { metaGroups: readonly string[]; protobuf?: readonly string[] },
  /** stream: a watch; cbor: gate CBORServingAndStorage is on. */
  opts: { stream?: boolean; cbor?: boolean } = {},
  /** The protobuf media types, when the object has a protobuf form. */
  protobuf?: readonly string[],
): ResponseFormat {
  const entries = parseAccept(accept);
  // No Accept (or nothing parsable) means JSON; an Accept whose every entry has q=0 refuses all.
  if (entries.length === 0 && !refusesAll(accept)) return { mediaType: 'application/json' };
  const yamlAllowed = !opts.stream;
  const metaGroup = (m: MediaType) => conversions?.metaGroups.find((g) => g === m.params.g);
  for (const m of entries) {
    // CBOR when its gate is on: single items, and `application/cbor-seq` for a watch.
    if (opts.cbor && !m.params.as && m.type === 'application' && (m.subtype === 'cbor' || (opts.stream && m.subtype === 'cbor-seq'))) return { mediaType: 'application/cbor' };
    // The metadata-only conversions have a protobuf form for every kind (meta/v1 only).
    const conversionPb = m.params.as ? spelledAs(m, conversions?.protobuf) : undefined;
    if (conversionPb) {
      const g = metaGroup(m);
      if (m.params.as === 'Table' || !CONVERSION_KINDS.has(m.params.as!) || !g || m.params.v !== 'v1') continue;
      if (m.params.stream !== undefined && m.params.stream !== 'watch') continue;
      return { mediaType: 'protobuf', protobufType: conversionPb, convert: { kind: m.params.as as Conversion['kind'], apiVersion: `${g}/v1` } };
    }
    const pb = m.params.as ? undefined : spelledAs(m, protobuf);
    if (pb) {
      // `stream=watch` asks for the framed stream; either way a watch gets frames.
      if (m.params.stream !== undefined && m.params.stream !== 'watch') continue;
      return { mediaType: 'protobuf', protobufType: pb };
    }
    const anyType = m.type === '*' || (m.type === 'application' && m.subtype === '*');
    const json = anyType || (m.type === 'application' && m.subtype === 'json');
    const yaml = yamlAllowed && m.type === 'application' && m.subtype === 'yaml';
    if (!json && !yaml) continue;
    const mediaType: ResponseMediaType = yaml ? 'application/yaml' : 'application/json';
    const as = m.params.as;
    if (as === undefined || as === '') {
      if (m.params.g || m.params.v) continue;
      return { mediaType };
    }
    const g = metaGroup(m);
    if (!g || !CONVERSION_KINDS.has(as) || !CONVERSION_VERSIONS.has(m.params.v ?? '')) continue;
    return { mediaType, convert: { kind: as as Conversion['kind'], apiVersion: `${g}/${m.params.v}` } };
  }
  const offered: string[] = [...(opts.stream ? SUPPORTED_STREAM_TYPES : SUPPORTED_RESPONSE_TYPES)];
  if (protobuf?.[0]) offered.push(protobuf[0]);
  if (opts.cbor) offered.push(opts.stream ? 'application/cbor-seq' : 'application/cbor');
  throw errors.notAcceptable(offered);
}

type BodyType = 'json' | 'yaml' | 'protobuf' | 'cbor' | 'json-patch' | 'merge-patch' | 'strategic-merge-patch' | 'apply-patch' | 'apply-patch-cbor';

const BODY_TYPES: Record<string, BodyType> = {
  'application/json': 'json',
  'application/yaml': 'yaml',
  'application/json-patch+json': 'json-patch',
  'application/merge-patch+json': 'merge-patch',
  'application/strategic-merge-patch+json': 'strategic-merge-patch',
  'application/apply-patch+yaml': 'apply-patch',
};

/** Parsed Content-Type headers: clients send the same few values over and over. */
const parsedTypes = new Map<string, MediaType | undefined>();

function parseContentType(header: string): MediaType | undefined {
  let m = parsedTypes.get(header);
  if (m === undefined && !parsedTypes.has(header)) {
    m = isMediaType(header) ? parseMediaType(header) : undefined;
    if (parsedTypes.size < 256) parsedTypes.set(header, m);
  }
  return m;
}

// RFC 2045 tokens: printable ASCII but space and the specials ()<>@,;:\"/[]?=
const TOKEN = "[!#$%&'*+\\-.^_`{|}~0-9A-Za-z]+";
const TYPE_RE = new RegExp(`^${TOKEN}(/${TOKEN})?$`);
const PARAM_RE = new RegExp(`^;[ \\t]*(${TOKEN})[ \\t]*=[ \\t]*(?:${TOKEN}|"(?:[^"\\\\]|\\\\.)*")`);

/**
 * Whether a Content-Type parses as a media type as Go's mime.ParseMediaType reads it (what
 * kube-apiserver's body negotiation calls): a type, a subtype, then `;key=value` parameters
 * (token or quoted string, each key once, a trailing `;` allowed). Anything else is no media type
 * at all (415), never read as one it resembles (`application/json/extra`, `application/`).
 */
function isMediaType(header: string): boolean {
  const semi = header.indexOf(';');
  const base = (semi < 0 ? header : header.slice(0, semi)).trim();
  if (!TYPE_RE.test(base)) return false;
  let rest = semi < 0 ? '' : header.slice(semi);
  const seen = new Set<string>();
  for (;;) {
    rest = rest.replace(/^[ \t]+/, '');
    if (rest === '') return true;
    const m = PARAM_RE.exec(rest);
    if (!m) return rest.trim() === ';';
    const key = m[1]!.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    rest = rest.slice(m[0].length);
  }
}

/**
 * The request body's encoding; 415 for anything else. `protobuf` lists the accepted spellings of
 * the protobuf media type (the profile's first, the one the 415 message names).
 */
export function negotiateBody<T extends BodyType>(contentType: string | undefined, allowed: readonly T[], protobuf?: readonly string[], cbor = false): T {
  const m = parseContentType(contentType ?? '');
  const known: readonly BodyType[] = cbor ? allowed : allowed.filter((t) => t !== 'cbor' && t !== 'apply-patch-cbor');
  const pb = protobuf && known.includes('protobuf') ? protobuf : [];
  const types: Record<string, BodyType> = { ...BODY_TYPES, ...(pb[0] ? { [pb[0]]: 'protobuf' } : {}), ...(cbor ? { 'application/cbor': 'cbor', 'application/apply-patch+cbor': 'apply-patch-cbor' } : {}) };
  const accepted = Object.entries(types).filter(([, t]) => known.includes(t)).map(([k]) => k);
  const t = m ? (types[`${m.type}/${m.subtype}`] ?? (spelledAs(m, pb) ? 'protobuf' : undefined)) : known.includes('json') && !contentType ? 'json' : undefined;
  if (!t || !known.includes(t)) throw errors.unsupportedMediaType(accepted);
  // Bodies are read as UTF-8: one declared in another charset would be misread, so it is refused.
  const charset = m?.params.charset;
  if (charset !== undefined && !/^(utf-?8|us-ascii)$/i.test(charset)) throw errors.unsupportedMediaType(accepted);
  return t as T;
}
