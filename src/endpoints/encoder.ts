// The negotiated response encoding as one value: what a handler (or the error writer) negotiated
// once is handed to the writers, which encode with it and never re-negotiate or re-encode.

import { yaml } from '../machinery/yaml.ts';
import type { KObject } from '../machinery/meta.ts';
import type { StatusBody } from '../machinery/status.ts';
import { negotiateResponse, type Conversion, type ResponseFormat, type ResponseMediaType } from '../negotiation/negotiate.ts';
import { encodeCbor } from '../wire/cbor.ts';
import { withCborBytes } from '../wire/cbor-bytes.ts';
import { encodeList, encodeObject, encodeStatus, encodeWatchEvent, supportsProtobuf } from '../wire/protobuf/index.ts';
import { lengthPrefixed, type BodyEncoding } from '../registry/encoded.ts';

/**
 * YAML as Kubernetes writes it (JSON converted to YAML): map keys sorted, two-space indent, list
 * items at their key's indentation.
 */
function yamlText(value: unknown): string {
  return yaml().stringify(value, { sortMapEntries: true, indentSeq: false, lineWidth: 0 });
}

/** An object, list or Status in the protobuf envelope; undefined when it has no protobuf form. */
function protobufBody(value: unknown): Buffer | undefined {
  const o = value as { apiVersion?: string; kind?: string; items?: unknown; metadata?: object };
  if (typeof o?.kind !== 'string') return undefined;
  if (o.kind === 'Status') return encodeStatus(o);
  if (typeof o.apiVersion !== 'string' || !supportsProtobuf(o.apiVersion, o.kind)) return undefined;
  if (o.kind.endsWith('List') && Array.isArray(o.items)) return encodeList(o as Parameters<typeof encodeList>[0]);
  return encodeObject(o as KObject);
}

export class Encoder implements BodyEncoding {
  readonly mediaType: ResponseMediaType;
  readonly stored: BodyEncoding['stored'];
  /** The Content-Type of a body in this encoding: protobuf as the client spelled it. */
  readonly contentType: string;
  /** The Content-Type of a watch stream in this encoding. */
  readonly streamContentType: string;
  readonly convert?: Conversion;

  constructor(format: ResponseFormat) {
    this.mediaType = format.mediaType;
    this.convert = format.convert;
    this.stored = format.mediaType === 'application/json' ? 'json' : format.mediaType === 'protobuf' ? 'protobuf' : 'value';
    this.contentType = format.mediaType === 'protobuf' ? format.protobufType! : format.mediaType;
    this.streamContentType = format.mediaType === 'protobuf' ? `${format.protobufType};stream=watch` : format.mediaType === 'application/cbor' ? 'application/cbor-seq' : 'application/json';
  }

  get json(): boolean {
    return this.mediaType === 'application/json';
  }

  /**
   * An object, list or Status in this encoding; undefined for JSON, and for a value without a
   * protobuf form, which the writer answers as JSON.
   */
  encode(value: unknown): string | Buffer | undefined {
    switch (this.mediaType) {
      case 'application/yaml':
        return yamlText(value);
      case 'application/cbor':
        return encodeCbor(withCborBytes(value));
      case 'protobuf':
        return protobufBody(value);
      default:
        return undefined;
    }
  }

  /** One watch event (a converted object, or an ERROR with its Status) as a frame of the stream. */
  event(type: string, object: object | StatusBody): string | Buffer {
    if (this.mediaType === 'protobuf') return lengthPrefixed(encodeWatchEvent(type, object));
    if (this.mediaType === 'application/cbor') return encodeCbor({ type, object: withCborBytes(object) });
    return `${JSON.stringify({ type, object })}\n`;
  }
}

/**
 * Formats without a conversion are few (one per media type and protobuf spelling): their encoders
 * are made once and shared, so negotiating allocates nothing new for them.
 */
const shared = new Map<string, Encoder>();

export function encoderFor(format: ResponseFormat): Encoder {
  if (format.convert) return new Encoder(format);
  const key = format.protobufType ?? format.mediaType;
  let e = shared.get(key);
  if (!e) {
    e = new Encoder(format);
    shared.set(key, e);
  }
  return e;
}

/** The encoder of plain JSON answers (before or without negotiation). */
export const JSON_ENCODER = encoderFor({ mediaType: 'application/json' });

/**
 * The encoder of an error answered before (or without) a negotiated one, from the Accept header
 * once, as kube-apiserver's error writer does: a Status has a protobuf form whatever the kind.
 */
export function errorEncoder(accept: string | undefined, opts: { cbor?: boolean; protobuf?: readonly string[] }): Encoder {
  try {
    return encoderFor(negotiateResponse(accept, undefined, { cbor: opts.cbor }, opts.protobuf));
  } catch {
    return JSON_ENCODER;
  }
}
