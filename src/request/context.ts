// The typed request context: what the filters learn about a request travels here, never in globals.

import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { UserInfo } from './user.ts';
import type { RequestInfo } from './request-info.ts';

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  info: RequestInfo;
  receivedAt: number;
  /** When the request must have been answered (non-long-running requests). */
  deadline?: number;
  /** Who authenticated. */
  user?: UserInfo;
  /** The user the request acts as: the impersonated user when it impersonates, `user` otherwise. */
  effectiveUser?: UserInfo;
  /** Set when the request impersonates (the audit event's `impersonatedUser`). */
  impersonatedUser?: UserInfo;
  warnings: WarningRecorder;
  auditAnnotations: Record<string, string>;
  /** The audit sink took the request (its RequestReceived stage): it is told of the request's end. */
  audited: boolean;
  /**
   * The identity the request's own object gave (a create's or update's body), once decoded and
   * before anything was done to it: audit completes the event's objectRef with it.
   */
  requestObject?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
  /** The request's body once a handler has read it (what audit's Request level records). */
  requestBody?: Buffer;
  /** The Status the request was answered with, when it was one (audit's `responseStatus`). */
  responseStatus?: { status: string; message?: string; reason?: string; code: number; details?: unknown };
  /** Whether get/list responses may be gzip-compressed (gate APIResponseCompression). */
  compression?: boolean;
  /** Gate CBORServingAndStorage: CBOR is offered and accepted. */
  cbor?: boolean;
  /** The accepted spellings of the protobuf media type, for errors: a Status always has a protobuf form. */
  statusProtobufTypes?: readonly string[];
  /**
   * The request's Audit-ID (audit-id.ts): every answer carries it, written with the answer's own
   * headers by `writeHead`. (A header set on the response beforehand makes Node merge every header
   * of the answer one at a time, validating each again: several microseconds a request.)
   */
  auditID: string;
  /**
   * The headers the answer was started with by `writeHead` (not where `getHeader` finds them):
   * its type and encoding for audit, its length (after compression) for the response size metric.
   */
  answerHeaders?: OutgoingHttpHeaders;
}

/** Starts the answer: its status and headers, with the request's Audit-ID. */
export function writeHead(ctx: RequestContext, code: number, headers: OutgoingHttpHeaders): void {
  headers['Audit-ID'] = ctx.auditID;
  ctx.answerHeaders = headers;
  ctx.res.writeHead(code, headers);
}

/** kube-apiserver's warning recorder: past this many characters of text, warnings are truncated… */
const TRUNCATE_AT_TOTAL_CHARS = 4 * 1024;
/** …each to this many characters, and once the total is passed again, further ones are dropped. */
const TRUNCATE_ITEM_CHARS = 256;
/**
 * The encoded `Warning` header lines never take more than this many bytes, whatever the texts: a
 * client reads at most 16 KiB of headers (Node's default), and a text of escaped characters or
 * thousands of one-character warnings would pass that within kube-apiserver's character budget.
 */
const MAX_WARNING_HEADER_BYTES = 8 * 1024;
/** Bytes a header line takes besides its value (`Warning: ` and CRLF). */
const HEADER_LINE_OVERHEAD = 11;

/** Whether a surrogate pair (one character of two code units) starts at `i`. */
function pairAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff || i + 1 >= text.length) return false;
  const d = text.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff;
}

/** The first `max` characters (code points) of `text`, and how many there are, without reading past them. */
function headChars(text: string, max: number): { text: string; chars: number } {
  let chars = 0;
  let i = 0;
  while (i < text.length && chars < max) {
    i += pairAt(text, i) ? 2 : 1;
    chars++;
  }
  return { text: i >= text.length ? text : text.slice(0, i), chars };
}

/** The number of characters (code points) of `text`. */
function charCount(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length; i++) {
    if (pairAt(text, i)) {
      pairs++;
      i++;
    }
  }
  return text.length - pairs;
}

/** `299 - "text"`: a header value must be printable ASCII, so anything else is escaped as \uXXXX inside the quotes. */
function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text.replace(/[\r\n]+/g, ' ')).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}`;
}

/**
 * Collects `Warning: 299 - "…"` headers as kube-apiserver's recorder does: each distinct text once,
 * in order; when the texts pass 4,096 characters in all, every warning (those recorded and those
 * to come) is cut to 256 characters, and once they pass 4,096 characters again the rest are
 * dropped. On top of that the header lines are held to MAX_WARNING_HEADER_BYTES.
 */
export class WarningRecorder {
  private readonly seen = new Set<string>();
  /** The recorded texts, in order, each with its header value (truncated once truncating). */
  private readonly recorded: { text: string; header: string }[] = [];
  /** Characters of text in the headers. */
  private written = 0;
  private headerBytes = 0;
  private truncating = false;

  add(message: string): void {
    if (message.length === 0) return;
    if (this.truncating && this.written >= TRUNCATE_AT_TOTAL_CHARS) return;
    if (this.seen.has(message)) return;
    this.seen.add(message);
    if (this.truncating) {
      const cut = headChars(message, TRUNCATE_ITEM_CHARS);
      this.push(message, cut.text, cut.chars);
      return;
    }
    const chars = charCount(message);
    if (this.written + chars <= TRUNCATE_AT_TOTAL_CHARS) {
      this.push(message, message, chars);
      return;
    }
    // Over the budget: from now on every warning is truncated, those already recorded included.
    this.truncating = true;
    const before = this.recorded.splice(0);
    this.written = 0;
    this.headerBytes = 0;
    for (const { text } of [...before, { text: message }]) {
      const cut = headChars(text, TRUNCATE_ITEM_CHARS);
      this.push(text, cut.text, cut.chars);
    }
  }

  private push(text: string, shown: string, chars: number): void {
    const header = warningHeader(shown);
    const bytes = header.length + HEADER_LINE_OVERHEAD;
    if (this.headerBytes + bytes > MAX_WARNING_HEADER_BYTES) return;
    this.headerBytes += bytes;
    this.written += chars;
    this.recorded.push({ text, header });
  }

  /** The texts recorded (each once), as they were given. */
  get messages(): string[] {
    return this.recorded.map((r) => r.text);
  }

  header(): string[] {
    return this.recorded.map((r) => r.header);
  }
}
