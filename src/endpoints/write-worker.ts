// A write worker: prepares large writes (decoding the request, applying it to the stored object,
// field ownership, validation, encoding) off the server's event loop, for the pool in
// write-pool.ts. It builds the built-in kind definitions and their preparations itself, from the
// same naming profile and feature gates as the server, so a job names its kind instead of carrying
// a definition (definitions hold functions, which cannot cross threads).

import { parentPort, workerData } from 'node:worker_threads';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { namingProfile } from '../naming.ts';
import { parseFeatureGates } from '../machinery/feature-gates.ts';
import { isStatusError } from '../machinery/status.ts';
import { WarningRecorder } from '../request/context.ts';
import { builtinKinds } from '../registry/kinds/index.ts';
import { DeclarativeValidation, type DeclarativeEvent } from '../registry/declarative-validation.ts';
import { kindKey, linkSharedStorage, subresourcesOf, WritePreparation, type RequestedMeta } from '../registry/preparation.ts';
import { writeInput } from './write-inputs.ts';
import { hasRules } from '../registry/validation-rules.ts';
import { loadCel } from '../cel/load.ts';
import type { WorkerMessage, WriteJob, WriteReply, WriteWorkerData } from './write-pool.ts';

const data = workerData as WriteWorkerData;
const gates = parseFeatureGates(data.featureGates);
// Declarative validation's metrics and log lines go back with each answer, to be counted there.
let events: DeclarativeEvent[] = [];
// Warnings are recorded here as the server's recorder records them (each text once, a bounded
// total), so a body of a hundred thousand unknown fields sends back only what can be shown.
let warnings = new WarningRecorder();
const declarative = DeclarativeValidation.recording(gates, (e) => events.push(e));
const defs = builtinKinds(namingProfile(data.naming), gates, { componentHealth: async () => [] }).filter((d) => !d.computed && !d.review);
// (A schema with validation rules has them compiled with its preparation: the expression language first.)
if (defs.some((d) => hasRules(d.schema))) await loadCel();
const preps = defs.map((d) => new WritePreparation(d, declarative));
linkSharedStorage(preps);
const byKind = new Map(preps.map((p) => [kindKey(p.def), { prep: p, subresources: subresourcesOf(p.def) }]));

// A large job leaves garbage that nothing else in an idle worker would prompt the collector to
// reclaim: the worker's memory, which is the server's, would stay at its high-water mark. The pool
// says when to collect it (once the request has been answered); a full collection costs little
// then (what is live is small) and returns it.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type?: 'major' | 'minor'; flavor?: 'regular' | 'last-resort' }) => void;
const collect = (): void => gc();
/**
 * An idle worker's collection also gives back the young generation a large write grew (V8 shrinks
 * it only when it collects to reduce memory, as it does for its last-resort collection).
 */
const collectAll = (): void => gc({ type: 'major', flavor: 'last-resort' });

/**
 * How long a worker stays idle before it collects what smaller jobs left: each leaves less than a
 * large one, but together they fill the young generation and the old one's growth, and an idle
 * worker would keep them as long as it lives.
 */
const IDLE_COLLECT_MS = 1000;
let idle: NodeJS.Timeout | undefined;

parentPort!.postMessage({ ready: true } satisfies WriteReply);
parentPort!.on('message', (msg: WorkerMessage) => {
  if ('collect' in msg) return collect();
  clearTimeout(idle);
  void run(msg).then((reply) => {
    parentPort!.postMessage(reply, movable(reply));
    (idle = setTimeout(collectAll, IDLE_COLLECT_MS)).unref();
  });
});

/**
 * The prepared bytes' memory, moved to the event loop rather than copied there: nothing here
 * reads them again, and a copy of a large object costs the event loop its time and fresh pages.
 * Only memory that holds those bytes alone moves (a small Buffer shares Node's pool).
 */
function movable(reply: WriteReply): ArrayBuffer[] {
  const bytes = 'prepared' in reply && 'bytes' in reply.prepared ? reply.prepared.bytes : undefined;
  const memory = bytes?.buffer;
  return memory instanceof ArrayBuffer && bytes!.byteOffset === 0 && bytes!.byteLength === memory.byteLength ? [memory] : [];
}

async function run({ id, job, input }: WriteJob): Promise<WriteReply> {
  events = [];
  warnings = new WarningRecorder();
  let requested: RequestedMeta | undefined;
  const kind = byKind.get(job.kind);
  try {
    if (!kind) throw new Error(`no definition for ${job.kind}`);
    const prepared = await kind.prep.prepare(job, writeInput(input, kind.prep).mutate, kind.subresources, (w) => warnings.add(w), (m) => (requested = m));
    // The object stays here: the bytes are what the event loop stores and answers with.
    if ('object' in prepared) delete prepared.object;
    return { id, prepared, warnings: warnings.messages, declarative: events, requested };
  } catch (e) {
    return isStatusError(e)
      ? { id, status: { code: e.code, reason: e.status.reason ?? 'BadRequest', message: e.message, details: e.status.details, headers: e.headers }, warnings: warnings.messages, declarative: events, requested }
      : { id, failure: e instanceof Error ? e.message : String(e) };
  }
}
