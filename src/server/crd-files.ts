// CustomResourceDefinitions loaded at start (`startServer({ crds })`, `--crd-dir`), as envtest's
// CRDDirectoryPaths: each path a file or a directory of `.yaml`, `.yml` and `.json` files (not
// recursive), a file holding one or more documents (`---`) or a List. The files are read before
// anything is opened, the CRDs created (or updated, when storage already has them) once the
// controllers run, and the start returns only when every one is Established. Any problem is a
// start-up error of one line that names the file.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { yaml } from '../machinery/yaml.ts';
import { readYamlFast } from '../machinery/yaml-read.ts';
import type { KObject } from '../machinery/meta.ts';
import { isStatusError } from '../machinery/status.ts';
import type { RegistryStore } from '../registry/store.ts';
import { checkObject } from '../endpoints/decode.ts';

/** A CRD read from a file, with where it came from. */
export interface CrdFile {
  file: string;
  object: KObject;
}

const MANIFEST = new Set(['.yaml', '.yml', '.json']);

const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, ' ').trim();

/** Reads every CRD the paths name; throws one-line errors (`CRD file <path>: <why>`). */
export function readCrdFiles(paths: readonly string[], group: string): CrdFile[] {
  const out: CrdFile[] = [];
  for (const path of paths) {
    let files: string[];
    try {
      files = statSync(path).isDirectory()
        ? readdirSync(path)
            .filter((f) => MANIFEST.has(extname(f).toLowerCase()))
            .sort()
            .map((f) => join(path, f))
        : [path];
    } catch (e) {
      throw new Error(`CRD file ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : oneLine((e as Error).message)}`);
    }
    for (const file of files) out.push(...readOne(file, group));
  }
  return out;
}

function readOne(file: string, group: string): CrdFile[] {
  const fail = (why: string) => new Error(`CRD file ${file}: ${oneLine(why)}`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw fail((e as Error).message);
  }
  const out: CrdFile[] = [];
  for (const value of documents(text, fail)) {
    if (value === null || value === undefined) continue;
    for (const item of listItems(value)) {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) throw fail('a document is not an object');
      const o = item as KObject;
      const kind = (o as { kind?: unknown }).kind;
      const apiVersion = (o as { apiVersion?: unknown }).apiVersion;
      if (kind !== 'CustomResourceDefinition' || apiVersion !== `${group}/v1`)
        throw fail(`expected ${group}/v1 CustomResourceDefinition, found ${String(apiVersion ?? '')} ${String(kind ?? '')}`.trimEnd());
      out.push({ file, object: o });
    }
  }
  return out;
}

/** The documents of a file: JSON parsed as JSON (many times faster than as YAML), YAML otherwise. */
function documents(text: string, fail: (why: string) => Error): unknown[] {
  if (/^\s*[{[]/.test(text)) {
    try {
      return [JSON.parse(text)];
    } catch {
      /* YAML in flow style, or broken: the YAML parser says which */
    }
  }
  // The fast reader when it can (YAML 1.2 core scalars, as the `yaml` library's default schema).
  const fast = readYamlFast(text, { scalars: 'core', multi: true, duplicates: false, maxDepth: 1000, aliasErrors: false });
  if (fast) return fast.documents;
  // Without the duplicate-key check, which is quadratic in a mapping's keys (a large schema's properties).
  return Array.from(yaml().parseAllDocuments(text, { uniqueKeys: false })).map((doc) => {
    if (doc.errors.length) throw fail(doc.errors[0]!.message);
    return doc.toJS() as unknown;
  });
}

/** A List's items, or the document itself. */
function listItems(value: unknown): unknown[] {
  const v = value as { kind?: unknown; items?: unknown };
  return typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items) ? v.items : [value];
}

const established = (o: KObject | undefined): boolean =>
  ((o as { status?: { conditions?: { type: string; status: string }[] } } | undefined)?.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');

const namesConflict = (o: KObject): string | undefined =>
  ((o as { status?: { conditions?: { type: string; status: string; message?: string }[] } }).status?.conditions ?? []).find((c) => c.type === 'NamesAccepted' && c.status === 'False')?.message;

/**
 * Creates (or updates) the CRDs through the store, then waits until the controller has
 * established every one; a refused CRD or one whose names conflict is an error naming its file.
 */
export async function installCrds(store: RegistryStore, crds: readonly CrdFile[], timeoutMs = 30_000): Promise<void> {
  // All at once: each write waits for its commit, and the commits of concurrent writes are shared.
  await Promise.all(crds.map((c) => install(store, c)));
  await Promise.all(crds.map((c) => waitEstablished(store, c, Date.now() + timeoutMs, timeoutMs)));
}

async function install(store: RegistryStore, { file, object }: CrdFile): Promise<void> {
  {
    const name = object.metadata?.name;
    // Already in storage (a restart on the same data): the file's spec wins.
    const update = (stored: string) =>
      store.guaranteedUpdate(undefined, stored, (current) => {
        const wanted = checkObject(structuredClone(object), store.def, 'Ignore', []).obj;
        return { ...wanted, metadata: { ...wanted.metadata, resourceVersion: current?.metadata.resourceVersion } };
      }, {
        dryRun: false,
        manager: 'crd-files',
      });
    try {
      // A restart finds its CRDs stored: it updates them rather than preparing a create that is refused.
      if (name !== undefined && (await isStored(store, name))) await update(name);
      else {
        try {
          // Decoded as a request's body is: defaults, types and the CRD's own rules (on a copy the
          // write takes as its own: the file's object stays for an update after a conflict).
          await store.create(undefined, { mutate: () => checkObject(structuredClone(object), store.def, 'Ignore', []).obj }, { dryRun: false, manager: 'crd-files' });
        } catch (e) {
          if (!(isStatusError(e) && e.code === 409 && name)) throw e;
          await update(name);
        }
      }
    } catch (e) {
      throw new Error(`CRD file ${file}: ${oneLine(e instanceof Error ? e.message : String(e))}`);
    }
  }
}

/** Whether a CRD of that name is stored (read from the store's cache). */
async function isStored(store: RegistryStore, name: string): Promise<boolean> {
  try {
    await store.getEncoded(undefined, name);
    return true;
  } catch (e) {
    if (isStatusError(e) && e.code === 404) return false;
    throw e;
  }
}

async function waitEstablished(store: RegistryStore, { file, object }: CrdFile, deadline: number, timeoutMs: number): Promise<void> {
  {
    const name = object.metadata.name!;
    for (;;) {
      // The cache's view is parsed once per version: polling it costs nothing while the controller works.
      const got = store.cachedView(undefined, name) ?? (await store.get(undefined, name).catch(() => undefined));
      if (got && established(got)) break;
      const conflict = got && namesConflict(got);
      if (conflict) throw new Error(`CRD file ${file}: ${name} is not established: ${conflict}`);
      if (Date.now() > deadline) throw new Error(`CRD file ${file}: ${name} was not established within ${timeoutMs / 1000}s`);
      await new Promise((r) => setTimeout(r, 2));
    }
  }
}
