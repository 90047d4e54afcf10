// Create and update bodies decoded off the event loop. One event loop serves every client, and
// decoding and checking a large body costs CPU in proportion to its size (the YAML library reads
// well under 1 MiB/s; a 3 MiB JSON body of unknown fields takes a second to check), during which
// no other request is served. A body above a size threshold is therefore decoded by a small pool
// of worker threads; smaller bodies, the common case, keep the inline path, which costs less than
// a hand-off. docs/architecture.md ("Hostile input") has the design.

import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { NamingProfileName } from '../naming.ts';
import type { FeatureGates } from '../machinery/feature-gates.ts';
import { errors, StatusError } from '../machinery/status.ts';
import { apiVersionOf, type KindDefinition } from '../registry/definition.ts';
import { decodeBody, type BodyType, type Decoded, type FieldValidation } from './decode.ts';

/** Bodies from this size on are decoded by a worker (YAML costs several times more per byte). */
const OFF_LOOP_BYTES: Record<BodyType, number> = { json: 64 * 1024, cbor: 64 * 1024, protobuf: 64 * 1024, yaml: 16 * 1024 };

/** Jobs waiting for a worker, at most; beyond, a request is refused with 429 (Retry-After). */
const MAX_QUEUED = 64;

/** A job without a deadline of its own gets this long (the default request timeout). */
const DEFAULT_JOB_MS = 60_000;

/** A worker's heap: a 3 MiB YAML document parses into a few hundred MB of nodes at most. */
const WORKER_HEAP_MB = 1024;

export interface DecodeWorkerData {
  naming: NamingProfileName;
  featureGates: Record<string, boolean>;
}

export interface DecodeJob {
  id: number;
  kind: string;
  body: Uint8Array;
  type: BodyType;
  validation: FieldValidation;
}

/** A worker's answer: the decoded body, the Status it was refused with, or an unexpected failure. */
export type DecodeReply =
  | { ready: true }
  | { id: number; decoded: Decoded }
  | { id: number; status: { code: number; reason: ConstructorParameters<typeof StatusError>[1]; message: string; details: StatusError['status']['details']; headers: Record<string, string> } }
  | { id: number; failure: string };

/** How a worker names a kind: its API version and kind, which the built-in definitions keep unique. */
export const kindKey = (d: Pick<KindDefinition, 'group' | 'version' | 'kind'>): string => `${apiVersionOf(d)}/${d.kind}`;

interface Pending {
  job: DecodeJob;
  deadline: number;
  resolve(d: Decoded): void;
  reject(e: Error): void;
}

interface Slot {
  worker: Worker;
  /** The worker has loaded its entry point and definitions. */
  ready: boolean;
  running: Pending | undefined;
  timer: NodeJS.Timeout | undefined;
}

export interface DecodePoolOptions {
  naming: NamingProfileName;
  featureGates: FeatureGates;
  /** The served definitions: only these are decoded by workers, which hold the same ones. */
  defs: readonly KindDefinition[];
  /** Workers at most (default: one fewer than the cores, at least one, at most four). */
  size?: number;
  /** Overrides the size thresholds (tests: 0 sends every body to a worker). */
  offLoopBytes?: number;
  /** A worker's heap limit in MB. */
  heapMb?: number;
}

/** Decodes create and update bodies (decodeBody), on the event loop or off it. */
export interface BodyDecoder {
  decode(body: Buffer, type: BodyType, def: KindDefinition, validation: FieldValidation, deadline?: number): Decoded | Promise<Decoded>;
}

/** Every body on the event loop (no pool: embedded handlers, tests of single handlers). */
export const inlineDecoder: BodyDecoder = { decode: (body, type, def, validation) => decodeBody(body, type, def, validation) };

export class DecodePool implements BodyDecoder {
  private readonly size: number;
  private readonly known: WeakSet<KindDefinition>;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  /** A worker could not even start (its loader or entry point failed): every body decodes inline. */
  private broken = false;

  constructor(private readonly opts: DecodePoolOptions) {
    this.size = Math.max(1, opts.size ?? Math.min(4, availableParallelism() - 1));
    this.known = new WeakSet(opts.defs);
  }

  /**
   * Decode a create or update body: inline when it is small (or its kind is not one the workers
   * know), else in a worker, by `deadline` (epoch ms) at the latest. Errors are the Status errors
   * decodeBody throws, whichever thread decoded.
   */
  decode(body: Buffer, type: BodyType, def: KindDefinition, validation: FieldValidation, deadline?: number): Decoded | Promise<Decoded> {
    const threshold = this.opts.offLoopBytes ?? OFF_LOOP_BYTES[type];
    if (this.closed || this.broken || body.length < threshold || !this.known.has(def)) return decodeBody(body, type, def, validation);
    if (this.queue.length >= MAX_QUEUED) throw errors.tooManyRequests();
    return new Promise<Decoded>((resolve, reject) => {
      const job: DecodeJob = { id: this.nextId++, kind: kindKey(def), body, type, validation };
      this.queue.push({ job, deadline: deadline ?? Date.now() + DEFAULT_JOB_MS, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops every worker; jobs still queued or running fail with 503, later bodies decode inline. */
  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(errors.unavailable('the server is shutting down'));
    const slots = this.slots.splice(0);
    for (const s of slots) this.finish(s, (p) => p.reject(errors.unavailable('the server is shutting down')));
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.running === undefined);
      if (!slot) {
        if (this.slots.length >= this.size) return;
        slot = this.spawn();
      }
      const p = this.queue.shift()!;
      const left = p.deadline - Date.now();
      if (left <= 0) {
        p.reject(jobTimedOut());
        continue;
      }
      slot.running = p;
      // A job past its deadline is not worth finishing: the worker is stopped (a new one takes
      // the next job), which is the only way to stop synchronous work.
      slot.timer = setTimeout(() => this.fail(slot, jobTimedOut(), false), left);
      slot.timer.unref();
      slot.worker.postMessage(p.job);
    }
  }

  private spawn(): Slot {
    const data: DecodeWorkerData = { naming: this.opts.naming, featureGates: { ...this.opts.featureGates } };
    // The sources are TypeScript: the worker registers the same loader the server runs under
    // before it loads its entry point, whether the server was started with `--import tsx` or
    // registered it at run time.
    const worker = new Worker(BOOTSTRAP, {
      eval: true,
      execArgv: [],
      workerData: { ...data, loader: LOADER_URL, entry: ENTRY_URL },
      resourceLimits: { maxOldGenerationSizeMb: this.opts.heapMb ?? WORKER_HEAP_MB },
    });
    // Workers never keep the process alive: an idle pool is no reason to keep running.
    worker.unref();
    const slot: Slot = { worker, ready: false, running: undefined, timer: undefined };
    worker.on('message', (reply: DecodeReply) => {
      if ('ready' in reply) {
        slot.ready = true;
        return;
      }
      const p = slot.running;
      if (!p || p.job.id !== reply.id) return;
      this.finish(slot, (q) => {
        if ('decoded' in reply) q.resolve(reply.decoded);
        else if ('status' in reply) q.reject(new StatusError(reply.status.code, reply.status.reason, reply.status.message, reply.status.details, reply.status.headers));
        else q.reject(new Error(`decoding the request body failed: ${reply.failure}`));
      });
      this.dispatch();
    });
    // A worker that runs out of its heap was given a body too costly to decode: the request is
    // refused as too large (413), never answered as a server error. Any other death is a bug and
    // fails its job as one. Either way the worker is replaced by the next dispatch.
    worker.on('error', (e: Error & { code?: string }) =>
      this.fail(slot, e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? tooCostly() : new Error(`the decoding worker failed: ${e.message}`)),
    );
    worker.on('exit', (code) => this.fail(slot, new Error(`the decoding worker exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }

  /** Hands the slot's running job to `settle` and marks the slot idle. */
  private finish(slot: Slot, settle: (p: Pending) => void): void {
    const p = slot.running;
    slot.running = undefined;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    if (p) settle(p);
  }

  /**
   * Fails the running job with `error` and retires the worker. A worker that failed before it was
   * ready will fail again: the pool stops using workers, and the waiting jobs decode inline.
   */
  private fail(slot: Slot, error: Error, died = true): void {
    const at = this.slots.indexOf(slot);
    if (at === -1) return;
    this.slots.splice(at, 1);
    if (died && !slot.ready && !this.closed) {
      this.broken = true;
      this.finish(slot, (p) => this.decodeInline(p));
      for (const p of this.queue.splice(0)) this.decodeInline(p);
    } else this.finish(slot, (p) => p.reject(error));
    void slot.worker.terminate();
    if (!this.closed) this.dispatch();
  }

  private decodeInline(p: Pending): void {
    const def = this.opts.defs.find((d) => kindKey(d) === p.job.kind)!;
    try {
      p.resolve(decodeBody(Buffer.from(p.job.body.buffer, p.job.body.byteOffset, p.job.body.byteLength), p.job.type, def, p.job.validation));
    } catch (e) {
      p.reject(e as Error);
    }
  }
}

const tooCostly = () =>
  new StatusError(413, 'RequestEntityTooLarge', 'Request entity too large: the request body needs more memory to decode than the server allows one request');

const jobTimedOut = () => errors.timeout('Timeout: request did not complete within requested timeout - context deadline exceeded');

const ENTRY_URL = new URL('./decode-worker.ts', import.meta.url).href;
const LOADER_URL = import.meta.resolve('tsx/esm/api');
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
import(workerData.loader).then((m) => { m.register(); return import(workerData.entry); });
`;
