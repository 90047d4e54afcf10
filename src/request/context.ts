// The typed request context: what the filters learn about a request travels here, never in globals.

import type { IncomingMessage, ServerResponse } from 'node:http';
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
  user?: UserInfo;
  /** The user the request acts as after impersonation. */
  effectiveUser?: UserInfo;
  warnings: WarningRecorder;
  auditAnnotations: Record<string, string>;
  /** Whether get/list responses may be gzip-compressed (gate APIResponseCompression). */
  compression?: boolean;
  /** Gate CBORServingAndStorage: CBOR is offered and accepted. */
  cbor?: boolean;
  /** The accepted spellings of the protobuf media type, for errors: a Status always has a protobuf form. */
  statusProtobufTypes?: readonly string[];
}

/** Collects `Warning: 299 - "…"` headers, one per distinct message. */
export class WarningRecorder {
  private readonly seen = new Set<string>();
  add(message: string): void {
    this.seen.add(message);
  }
  get messages(): string[] {
    return [...this.seen];
  }
  header(): string[] {
    // A header value must be printable ASCII: anything else is escaped as \uXXXX inside the quotes.
    return this.messages.map((m) => `299 - ${JSON.stringify(m.replace(/[\r\n]+/g, ' ')).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}`);
  }
}
