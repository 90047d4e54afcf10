// Large writes prepared off the event loop. One event loop serves every client, and decoding a
// large body, applying a patch to a large object, building its field sets, validating and encoding
// it cost CPU in proportion to its size (the YAML library reads well under 1 MiB/s; a 3 MiB object
// of labels takes seconds to prepare), during which no other request is served. A write whose
// request and stored object are large is therefore prepared by a small pool of worker threads;
// smaller writes, the common case, are prepared inline, where they cost less than a hand-off. The
// event loop keeps admission and the storage write. docs/architecture.md ("Hostile input") has
// the design.

import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { NamingProfileName } from '../naming.ts';
import type { FeatureGates } from '../machinery/feature-gates.ts';
import { errors, StatusError } from '../machinery/status.ts';
import { codeFile, FROM_SOURCE } from '../machinery/package-files.ts';
import type { KindDefinition } from '../registry/definition.ts';
import type { DeclarativeEvent, DeclarativeValidation } from '../registry/declarative-validation.ts';
import { kindKey, type PreparationCall, type PreparationJob, type PreparationOffload, type PreparedWrite, type RequestedMeta } from '../registry/preparation.ts';
import type { PortableForm } from './write-inputs.ts';
import { OFF_LOOP_BYTES } from './respond.ts';

/** Jobs waiting for a worker, at most; beyond, a request is refused with 429 (Retry-After). */
const MAX_QUEUED = 64;

/** A job without a deadline of its own gets this long (the default request timeout). */
const DEFAULT_JOB_MS = 60_000;

/** A worker's heap: a 3 MiB YAML document parses into a few hundred MB of nodes at most. */
export const WORKER_HEAP_MB = 1024;

/**
 * A worker's young generation (three semi-spaces' worth: 32 MiB each, twice V8's default). Most of
 * what a large write allocates lives until the write is prepared (the decoded object, its field
 * sets); with the default size the scavenger copies and promotes that again and again, and its
 * share of the time grows faster than the request (a list of 50,000 conditions spent twice the
 * share in collection at 3 MiB that it spent at 1 MiB).
 */
export const WORKER_YOUNG_MB = 96;

export interface WriteWorkerData {
  naming: NamingProfileName;
  featureGates: Record<string, boolean>;
}

export interface WriteJob {
  id: number;
  job: PreparationJob;
  input: PortableForm;
}

/** What a worker is sent: a job, or word to collect what the last large one left. */
export type WorkerMessage = WriteJob | { collect: true };

/** Jobs from this many bytes (request and stored object) on leave garbage worth collecting at once. */
const COLLECT_AFTER_BYTES = 1024 * 1024;

/** A thrown Status, as it crosses threads. */
export interface PortableStatus {
  code: number;
  reason: ConstructorParameters<typeof StatusError>[1];
  message: string;
  details: StatusError['status']['details'];
  headers: Record<string, string>;
}

/** A worker's answer: the prepared write, the Status it was refused with, or an unexpected failure. */
export type WriteReply =
  | { ready: true }
  | { id: number; prepared: PreparedWrite; warnings: string[]; declarative: DeclarativeEvent[]; requested?: RequestedMeta }
  | { id: number; status: PortableStatus; warnings: string[]; declarative: DeclarativeEvent[]; requested?: RequestedMeta }
  | { id: number; failure: string };

interface Pending {
  job: WriteJob;
  call: PreparationCall;
  deadline: number;
  resolve(d: PreparedWrite): void;
  reject(e: Error): void;
}

interface Slot {
  worker: Worker;
  /** The worker has loaded its entry point and definitions. */
  ready: boolean;
  running: Pending | undefined;
  timer: NodeJS.Timeout | undefined;
}

export interface WritePoolOptions {
  naming: NamingProfileName;
  featureGates: FeatureGates;
  /**
   * The definitions the workers hold (the built-in kinds of this naming profile and these gates):
   * only writes of these are prepared by workers.
   */
  defs: readonly KindDefinition[];
  /** Where the workers' declarative validation results are counted and logged, as inline. */
  declarative?: DeclarativeValidation;
  /** Workers at most (default: one fewer than the cores, at least one, at most four). */
  size?: number;
  /** Overrides the size threshold (tests: 0 sends every write to a worker). */
  offLoopBytes?: number;
  /** A worker's heap limit in MB. */
  heapMb?: number;
}

export class WritePool implements PreparationOffload {
  private readonly opts: WritePoolOptions;
  private readonly size: number;
  private readonly known: Set<string>;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  /** A worker could not even start (its loader or entry point failed): every write is prepared inline. */
  private broken = false;

  constructor(opts: WritePoolOptions) {
    this.opts = opts;
    this.size = Math.max(1, opts.size ?? Math.min(4, availableParallelism() - 1));
    this.known = new Set(opts.defs.map(kindKey));
  }

  /**
   * Prepares a write in a worker when its request and stored object together are large enough,
   * by `deadline` (epoch ms) at the latest; undefined when it should be prepared inline (small, a
   * kind the workers do not know, an input that cannot cross). Errors are the Status errors the
   * preparation throws, whichever thread ran it.
   */
  prepare(call: PreparationCall): Promise<PreparedWrite> | undefined {
    const { job, input, deadline } = call;
    const form = input.portable as PortableForm | undefined;
    if (!form || this.closed || this.broken || !this.known.has(job.kind)) return undefined;
    if (form.bytes + (job.stored?.value.byteLength ?? 0) < (this.opts.offLoopBytes ?? OFF_LOOP_BYTES)) return undefined;
    if (this.queue.length >= MAX_QUEUED) return Promise.reject(errors.tooManyRequests());
    return new Promise<PreparedWrite>((resolve, reject) => {
      this.queue.push({ job: { id: this.nextId++, job, input: form }, call, deadline: deadline ?? Date.now() + DEFAULT_JOB_MS, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops every worker; jobs still queued or running fail with 503, later writes are prepared inline. */
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
    const data: WriteWorkerData = { naming: this.opts.naming, featureGates: { ...this.opts.featureGates } };
    // From the TypeScript sources the worker registers the same loader the server runs under
    // before it loads its entry point, whether the server was started with `--import tsx` or
    // registered it at run time (see LOADER_URL).
    const worker = new Worker(BOOTSTRAP, {
      eval: true,
      execArgv: [],
      workerData: { ...data, loader: LOADER_URL, entry: ENTRY_URL },
      resourceLimits: { maxOldGenerationSizeMb: this.opts.heapMb ?? WORKER_HEAP_MB, maxYoungGenerationSizeMb: WORKER_YOUNG_MB },
    });
    // Workers never keep the process alive: an idle pool is no reason to keep running.
    worker.unref();
    const slot: Slot = { worker, ready: false, running: undefined, timer: undefined };
    worker.on('message', (reply: WriteReply) => {
      if ('ready' in reply) {
        slot.ready = true;
        return;
      }
      const p = slot.running;
      if (!p || p.job.id !== reply.id) return;
      this.finish(slot, (q) => {
        if (q.job.input.bytes + (q.job.job.stored?.value.byteLength ?? 0) >= COLLECT_AFTER_BYTES) this.collectWhenAnswered(slot, q);
        if ('declarative' in reply) {
          for (const w of reply.warnings) q.call.warn(w);
          if (reply.requested) q.call.describe?.(reply.requested);
          this.opts.declarative?.replay(reply.declarative);
        }
        if ('prepared' in reply) q.resolve(reply.prepared);
        else if ('status' in reply) q.reject(new StatusError(reply.status.code, reply.status.reason, reply.status.message, reply.status.details, reply.status.headers));
        else q.reject(new Error(`preparing the write failed: ${reply.failure}`));
      });
      this.dispatch();
    });
    // A worker that runs out of its heap was given a write too costly to prepare: the request is
    // refused as too large (413), never answered as a server error. Any other death is a bug and
    // fails its job as one. Either way the worker is replaced by the next dispatch.
    worker.on('error', (e: Error & { code?: string }) =>
      this.fail(slot, e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? tooCostly() : new Error(`the write worker failed: ${e.message}`)),
    );
    worker.on('exit', (code) => this.fail(slot, new Error(`the write worker exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }

  /**
   * A large job leaves hundreds of MB of garbage that nothing else in an idle worker would prompt
   * its collector to reclaim. The worker collects it once the request has been answered: at once,
   * the collection (tens of ms of a full mark-compact) would take a core while this thread still
   * stores the write and sends its answer. A job the worker runs first goes first.
   */
  private collectWhenAnswered(slot: Slot, p: Pending): void {
    const collect = () => {
      if (this.slots.includes(slot)) slot.worker.postMessage({ collect: true } satisfies WorkerMessage);
    };
    if (p.call.answered) p.call.answered(collect);
    else collect();
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
   * ready will fail again: the pool stops using workers, and the waiting jobs are prepared inline.
   */
  private fail(slot: Slot, error: Error, died = true): void {
    const at = this.slots.indexOf(slot);
    if (at === -1) return;
    this.slots.splice(at, 1);
    if (died && !slot.ready && !this.closed) {
      this.broken = true;
      this.finish(slot, (p) => this.runInline(p));
      for (const p of this.queue.splice(0)) this.runInline(p);
    } else this.finish(slot, (p) => p.reject(error));
    void slot.worker.terminate();
    if (!this.closed) this.dispatch();
  }

  private runInline(p: Pending): void {
    p.call.inline().then(p.resolve, p.reject);
  }
}

const tooCostly = () =>
  new StatusError(413, 'RequestEntityTooLarge', 'Request entity too large: the request needs more memory to prepare than the server allows one request');

const jobTimedOut = () => errors.timeout('Timeout: request did not complete within requested timeout - context deadline exceeded');

// Compiled (the package's JavaScript) the worker loads its entry (an entry point of the build) as
// it is; from the TypeScript sources it first registers tsx, a development dependency, which is
// never resolved otherwise.
const ENTRY_URL = codeFile('endpoints/write-worker.ts').href;
// Node.js that strips types itself (22.18 and newer) needs no loader for the sources either.
const stripsTypes = !!(process.features as { typescript?: string | false }).typescript;
const LOADER_URL = FROM_SOURCE && !stripsTypes ? import.meta.resolve('tsx/esm/api') : undefined;
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
(workerData.loader ? import(workerData.loader).then((m) => m.register()) : Promise.resolve()).then(() => import(workerData.entry));
`;
