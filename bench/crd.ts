// Custom resource benchmark: `npm run bench:crd`. In one run, against baselines of the same run:
// - create, get and list of a custom resource against a built-in kind of the same size (a
//   ConfigMap whose data holds what the custom resource's spec holds); goal: within 1.2×;
// - the time from a CRD create's answer to its Established condition; goal: under 100 ms;
// - a server started with 50 CRDs from files (a few large, one of about 800 KB, as the
//   largest operator CRDs are) against one started without; goal: under 1 s more. With
//   BENCH_CRD_DIR (a directory of real CRD files, such as the Gateway API, cert-manager and
//   Prometheus operator ones, which are not part of this repository), a third set takes those files
//   first and as many generated ones as make 50;
// - a custom resource write checked by 50 validation rules against the same write without
//   rules; goal: within 2×.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { stringify } from 'yaml';
import { startServer } from '../src/server/server.ts';
import { fmt, load, loadRow, percentiles, row } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
/** BENCH_ONLY=requests,start (either) runs only those parts: the requests to a running server, the starts with CRD files. */
const PHASES = new Set((process.env.BENCH_ONLY ?? 'requests,start').split(',').map((p) => p.trim()));
/** A directory of real CRD files (YAML or JSON, one CRD each) for the start with 50 CRDs. */
const REAL_CRDS = process.env.BENCH_CRD_DIR;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

type Body = Record<string, unknown>;

/** A namespaced CRD of `group` whose spec has `fields` string fields (each with `rules` validation rules). */
function crd(group: string, plural: string, kind: string, fields: number, rules = 0, descriptionBytes = 0): Body {
  const description = 'x'.repeat(descriptionBytes);
  const properties: Record<string, Body> = {};
  for (let i = 0; i < fields; i++) {
    properties[`field${i}`] = {
      type: 'string',
      maxLength: 256,
      ...(descriptionBytes ? { description } : {}),
      ...(i < rules ? { 'x-kubernetes-validations': [{ rule: `self.size() >= ${i % 3}`, message: `field${i} is too short` }] } : {}),
    };
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, shortNames: [`${plural.slice(0, 3)}x`], categories: ['bench'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: 'First', type: 'string', jsonPath: '.spec.field0' }, { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' }],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties },
                status: { type: 'object', properties: { conditions: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], items: { type: 'object', required: ['type', 'status'], properties: { type: { type: 'string' }, status: { type: 'string' } } } } } },
              },
            },
          },
        },
      ],
    },
  };
}

/** A CRD of about `bytes` bytes: nested objects with long descriptions, as generated operator CRDs are. */
function largeCrd(group: string, plural: string, kind: string, bytes: number): Body {
  const c = crd(group, plural, kind, 10);
  const leaf = (i: number): Body => ({ type: 'string', description: `Field ${i}: ${'a generated description of what this field configures. '.repeat(6)}` });
  const section = (n: number): Body => ({ type: 'object', description: 'A nested section of the configuration.', properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`option${i}`, leaf(i)])) });
  const spec = ((((c.spec as Body).versions as Body[])[0]!.schema as Body).openAPIV3Schema as Body).properties as Body;
  const size = () => JSON.stringify(c).length;
  const sections: Record<string, Body> = {};
  (spec.spec as Body).properties = { ...((spec.spec as Body).properties as Body), sections: { type: 'object', properties: sections } };
  for (let i = 0; size() < bytes; i++) sections[`section${i}`] = section(20);
  return c;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-crd-'));
  if (PHASES.has('requests')) await requests(dir);
  if (PHASES.has('start')) await starts(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** Custom resources against a built-in kind, a CRD's time to Established, writes checked by rules. */
async function requests(dir: string): Promise<void> {
  const server = await startServer({ naming: 'kubernetes', dataDir: join(dir, 'data'), port: 0, insecureServing: {}, log: () => {} });
  const pool = new Pool(server.url, { connections: CONCURRENCY * 2, pipelining: 1 });
  const send = async (method: string, path: string, body?: unknown, expect = 300): Promise<Body> => {
    const r = await pool.request({ method, path, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await r.body.text();
    if (r.statusCode >= expect) throw new Error(`${method} ${path}: ${r.statusCode} ${text.slice(0, 300)}`);
    return JSON.parse(text) as Body;
  };
  const establishedAfter = async (c: Body): Promise<number> => {
    await send('POST', CRDS, c);
    const t = performance.now();
    const name = (c.metadata as Body).name as string;
    for (;;) {
      const got = await send('GET', `${CRDS}/${name}`);
      if (((got.status as Body | undefined)?.conditions as Body[] | undefined)?.some((x) => x.type === 'Established' && x.status === 'True')) return performance.now() - t;
    }
  };
  try {
    await send('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });

    // ---- a custom resource against a built-in kind of the same size ----
    const FIELDS = 20;
    const value = (i: number) => `value-${i}-${'v'.repeat(40)}`;
    const payload = Object.fromEntries(Array.from({ length: FIELDS }, (_, i) => [`field${i}`, value(i)]));
    await establishedAfter(crd('bench.example.com', 'widgets', 'Widget', FIELDS));
    const CR = '/apis/bench.example.com/v1/namespaces/bench/widgets';
    const CM = '/api/v1/namespaces/bench/configmaps';
    const crObj = (name: string) => ({ apiVersion: 'bench.example.com/v1', kind: 'Widget', metadata: { name, labels: { app: 'bench' } }, spec: payload });
    const cmObj = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'bench' } }, data: payload });
    console.log(`custom resource and ConfigMap of ${JSON.stringify(crObj('x')).length} and ${JSON.stringify(cmObj('x')).length} bytes, ${CONCURRENCY} at a time`);
    for (let i = 0; i < 100; i++) {
      await send('POST', CR, crObj(`keep-${i}`));
      await send('POST', CM, cmObj(`keep-${i}`));
    }
    let n = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const cmCreate = await load(CONCURRENCY, SECONDS * 1000, () => send('POST', CM, cmObj(`c-${round}-${n++}`)));
      const crCreate = await load(CONCURRENCY, SECONDS * 1000, () => send('POST', CR, crObj(`c-${round}-${n++}`)));
      const cmGet = await load(CONCURRENCY, SECONDS * 1000, (_w, i) => send('GET', `${CM}/keep-${i % 100}`));
      const crGet = await load(CONCURRENCY, SECONDS * 1000, (_w, i) => send('GET', `${CR}/keep-${i % 100}`));
      const cmList = await load(CONCURRENCY, SECONDS * 1000, () => send('GET', `${CM}?limit=100`));
      const crList = await load(CONCURRENCY, SECONDS * 1000, () => send('GET', `${CR}?limit=100`));
      loadRow(`round ${round}: ConfigMap create (baseline)`, cmCreate);
      loadRow(`round ${round}: custom resource create`, crCreate, cmCreate);
      loadRow(`round ${round}: ConfigMap get (baseline)`, cmGet);
      loadRow(`round ${round}: custom resource get`, crGet, cmGet);
      loadRow(`round ${round}: ConfigMap list of 100 (baseline)`, cmList);
      loadRow(`round ${round}: custom resource list of 100`, crList, cmList);
      row(`round ${round}: time ratios CR/built-in (goal <= 1.2)`, `create ${fmt(cmCreate.perSecond / crCreate.perSecond, 2)}  get ${fmt(cmGet.perSecond / crGet.perSecond, 2)}  list ${fmt(cmList.perSecond / crList.perSecond, 2)}`);
    }

    // ---- from a CRD create's answer to Established ----
    const times: number[] = [];
    for (let i = 0; i < 20; i++) times.push(await establishedAfter(crd(`est${i}.example.com`, 'gadgets', 'Gadget', 10)));
    const p = percentiles(times);
    row('CRD create answered to Established (goal < 100 ms)', `p50 ${fmt(p.p50, 1)} ms  max ${fmt(Math.max(...times), 1)} ms`);

    // ---- 50 validation rules on a write ----
    await establishedAfter(crd('norules.example.com', 'things', 'Thing', 50));
    await establishedAfter(crd('rules.example.com', 'things', 'Thing', 50, 50));
    const ruled = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`field${i}`, value(i)]));
    const thing = (group: string, name: string) => ({ apiVersion: `${group}/v1`, kind: 'Thing', metadata: { name }, spec: ruled });
    for (let round = 1; round <= ROUNDS; round++) {
      const plain = await load(CONCURRENCY, SECONDS * 1000, () => send('POST', '/apis/norules.example.com/v1/namespaces/bench/things', thing('norules.example.com', `t-${round}-${n++}`)));
      const checked = await load(CONCURRENCY, SECONDS * 1000, () => send('POST', '/apis/rules.example.com/v1/namespaces/bench/things', thing('rules.example.com', `t-${round}-${n++}`)));
      loadRow(`round ${round}: CR create, 50 fields, no rules (baseline)`, plain);
      loadRow(`round ${round}: CR create, 50 fields, 50 rules`, checked, plain);
      row(`round ${round}: time ratio with rules (goal <= 2)`, fmt(plain.perSecond / checked.perSecond, 2));
    }
  } finally {
    await pool.close();
    await server.close();
  }
}

/**
 * 50 CRDs from files at start, as JSON and as YAML (as operators ship them), against a start
 * without; with BENCH_CRD_DIR, also its files and generated ones up to 50.
 */
async function starts(dir: string): Promise<void> {
  const sets: Record<string, { path: string; bytes: number }> = { json: { path: join(dir, 'crds-json'), bytes: 0 }, yaml: { path: join(dir, 'crds-yaml'), bytes: 0 } };
  const generated: Body[] = [];
  for (let i = 0; i < 50; i++) {
    const size = i === 0 ? 830_000 : i < 5 ? 150_000 : i < 15 ? 30_000 : 0;
    generated.push(size ? largeCrd(`files${i}.example.com`, 'parts', 'Part', size) : crd(`files${i}.example.com`, 'parts', 'Part', 15, 5, 200));
  }
  const write = (set: { path: string; bytes: number }, name: string, text: string) => {
    set.bytes += Buffer.byteLength(text);
    writeFileSync(join(set.path, name), text);
  };
  mkdirSync(sets.json!.path);
  mkdirSync(sets.yaml!.path);
  generated.forEach((c, i) => {
    write(sets.json!, `crd-${String(i).padStart(2, '0')}.json`, JSON.stringify(c));
    write(sets.yaml!, `crd-${String(i).padStart(2, '0')}.yaml`, stringify(c));
  });
  if (REAL_CRDS) {
    const files = readdirSync(REAL_CRDS).filter((f) => /\.(ya?ml|json)$/.test(f));
    const real = (sets[`yaml, ${files.length} from BENCH_CRD_DIR`] = { path: join(dir, 'crds-real'), bytes: 0 });
    mkdirSync(real.path);
    for (const f of files) {
      copyFileSync(join(REAL_CRDS, f), join(real.path, f));
      real.bytes += statSync(join(REAL_CRDS, f)).size;
    }
    // The small generated ones make up the rest (the large ones stand for the real files).
    generated.slice(Math.min(50, files.length)).forEach((c, i) => write(real, `generated-${String(i).padStart(2, '0')}.yaml`, stringify(c)));
  }
  for (let round = 1; round <= ROUNDS; round++) {
    // Wall time and this process's CPU time (the machine may be shared: CPU time moves less).
    const timed = async (crds?: string[]) => {
      const t = performance.now();
      const cpu = process.cpuUsage();
      const s = await startServer({ naming: 'kubernetes', port: 0, insecureServing: {}, log: () => {}, ...(crds ? { crds } : {}) });
      const used = process.cpuUsage(cpu);
      const ms = performance.now() - t;
      await s.close();
      return { ms, cpuMs: (used.user + used.system) / 1000 };
    };
    const bare = await timed();
    row(`round ${round}: start, no CRDs (baseline)`, `${fmt(bare.ms)} ms, CPU ${fmt(bare.cpuMs)} ms`);
    for (const [form, set] of Object.entries(sets)) {
      const loaded = await timed([set.path]);
      row(
        `round ${round}: start with 50 CRDs in ${form}, ${fmt(set.bytes / 1e6, 1)} MB (goal < 1 s more)`,
        `+${fmt(loaded.ms - bare.ms)} ms, CPU +${fmt(loaded.cpuMs - bare.cpuMs)} ms`,
        loaded.ms / bare.ms,
      );
    }
  }
}

await main();
