// A decoding worker: decodes and checks create and update bodies (decodeBody) off the server's
// event loop, for the pool in decode-pool.ts. It builds the built-in kind definitions itself, from
// the same naming profile and feature gates as the server, so a job names its kind instead of
// carrying a definition (definitions hold functions, which cannot cross threads).

import { parentPort, workerData } from 'node:worker_threads';
import { namingProfile } from '../naming.ts';
import { parseFeatureGates } from '../machinery/feature-gates.ts';
import { isStatusError } from '../machinery/status.ts';
import { builtinKinds } from '../registry/kinds/index.ts';
import { decodeBody } from './decode.ts';
import { kindKey, type DecodeJob, type DecodeReply, type DecodeWorkerData } from './decode-pool.ts';

const data = workerData as DecodeWorkerData;
const defs = new Map(
  builtinKinds(namingProfile(data.naming), parseFeatureGates(data.featureGates), { componentHealth: async () => [] }).map((d) => [kindKey(d), d]),
);

parentPort!.postMessage({ ready: true } satisfies DecodeReply);
parentPort!.on('message', (job: DecodeJob) => {
  let reply: DecodeReply;
  const def = defs.get(job.kind);
  try {
    if (!def) throw new Error(`no definition for ${job.kind}`);
    reply = { id: job.id, decoded: decodeBody(Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength), job.type, def, job.validation) };
  } catch (e) {
    reply = isStatusError(e)
      ? { id: job.id, status: { code: e.code, reason: e.status.reason ?? 'BadRequest', message: e.message, details: e.status.details, headers: e.headers } }
      : { id: job.id, failure: e instanceof Error ? e.message : String(e) };
  }
  parentPort!.postMessage(reply);
});
