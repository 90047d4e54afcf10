// Every kind, type and field the server publishes is described: the OpenAPI v3 document of every
// served group/version and the v2 document, in both naming profiles, walked from each kind through
// its $refs; descriptions name the profile's own domains only. Then `kubectl explain` (the newest
// kubectl, reading /openapi/v3, and kubectl 1.20, reading /openapi/v2 as protobuf) prints those
// descriptions for one field of every kind.

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import { kubectl120, kubectlFor } from '../support/kubectl.ts';
import { builtinKinds } from '../../src/registry/kinds/index.ts';
import { apiVersionOf, type KindDefinition } from '../../src/registry/definition.ts';
import type { Schema } from '../../src/machinery/schema.ts';
import type { NamingProfileName } from '../../src/naming.ts';

type Json = Record<string, any>;

/** Texts that stand in for a description rather than give one. */
const PLACEHOLDERS = [/^\s*$/, /^<(no description|empty)>$/i, /^[A-Za-z]+ of [\w./]+\.$/, /\bTODO\b/, /^(Standard (object|list) metadata|spec|status)\.?$/i];

/** Domains the other profile spells: they must not appear in this profile's descriptions. */
const FOREIGN: Record<NamingProfileName, RegExp> = { orch: /k8s\.io|kubernetes\.io|kube-system/, kubernetes: /orch\.io|orch-system/ };

function problemsOf(text: unknown, where: string, profile: NamingProfileName): string[] {
  if (typeof text !== 'string') return [`${where}: no description`];
  if (PLACEHOLDERS.some((p) => p.test(text))) return [`${where}: placeholder ${JSON.stringify(text)}`];
  if (FOREIGN[profile].test(text)) return [`${where}: names the other profile: ${JSON.stringify(text)}`];
  return [];
}

/**
 * Walks a published schema from `name` through every $ref, checking the description of each type
 * and each property (its own or its allOf wrapper's); returns the problems and adds every
 * component seen to `seen`.
 */
function walk(schemas: Json, refPrefix: string, name: string, path: string, profile: NamingProfileName, seen: Set<string>): string[] {
  if (seen.has(name)) return [];
  seen.add(name);
  const component = schemas[name];
  if (!component) return [`${path}: ${name} is not defined`];
  const problems = problemsOf(component.description, `${path} (type ${name})`, profile);
  const follow = (s: Json, at: string): void => {
    const ref: string | undefined = s.$ref ?? s.allOf?.[0]?.$ref;
    if (ref) problems.push(...walk(schemas, refPrefix, ref.slice(refPrefix.length), at, profile, seen));
    for (const [field, p] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
      problems.push(...problemsOf(p.description, `${at}.${field}`, profile));
      follow(p, `${at}.${field}`);
    }
    if (s.items) follow(s.items, `${at}[]`);
    if (typeof s.additionalProperties === 'object') follow(s.additionalProperties, `${at}{}`);
  };
  follow(component, path);
  return problems;
}

const gvKey = (d: KindDefinition) => (d.group ? `apis/${d.group}/${d.version}` : `api/${d.version}`);

/** One server per profile for the file (every case only reads): kubectl explain shares the orch one. */
const servers = new Map<'orch' | 'kubernetes', ReturnType<typeof testServer>>();
function serverFor(profile: 'orch' | 'kubernetes'): ReturnType<typeof testServer> {
  const domain = profile === 'orch' ? 'orch.io' : 'k8s.io';
  if (!servers.has(profile)) servers.set(profile, testServer({ naming: profile, runtimeConfig: `coordination.${domain}/v1beta1=true` }));
  return servers.get(profile)!;
}

for (const profile of ['orch', 'kubernetes'] as const) {
  describe(`OpenAPI descriptions, ${profile} profile`, async () => {
    const server = await serverFor(profile);
    const defs = builtinKinds(server.naming, server.featureGates, { componentHealth: async () => [] }).filter((d) => !d.unlisted);
    const index = (await api(server, 'GET', '/openapi/v3')).body as { paths: Record<string, { serverRelativeURL: string }> };

    test('every kind, every type and every field reachable from them is described in v3 and v2', async () => {
      assert.equal(Object.keys(index.paths).length, new Set(defs.map(gvKey)).size, 'one v3 document per served group/version');
      const v2 = (await api(server, 'GET', '/openapi/v2', undefined, { Accept: 'application/json' })).body as Json;
      let fields = 0;
      const docs: [string, Json, string][] = [['v2', v2.definitions, '#/definitions/']];
      for (const [gv, { serverRelativeURL }] of Object.entries(index.paths)) docs.push([`v3 ${gv}`, (await api(server, 'GET', serverRelativeURL)).body.components.schemas, '#/components/schemas/']);
      for (const [label, schemas, refPrefix] of docs) {
        const kinds = Object.entries(schemas as Record<string, Json>).filter(([, s]) => s['x-kubernetes-group-version-kind']);
        const problems: string[] = [];
        const seen = new Set<string>();
        for (const [name] of kinds) problems.push(...walk(schemas, refPrefix, name, name, profile, seen));
        // Then the types no kind refers to (Status, DeleteOptions, Patch: bodies of operations).
        for (const name of Object.keys(schemas)) problems.push(...walk(schemas, refPrefix, name, name, profile, seen));
        assert.deepEqual(problems, [], label);
        // A type documented differently at two of its uses is published twice (NodeConfigSource2).
        const names = new Set(Object.keys(schemas));
        assert.deepEqual([...names].filter((n) => /\D\d+$/.test(n) && names.has(n.replace(/\d+$/, ''))), [], `${label}: types published twice`);
        for (const d of defs.filter((x) => label === 'v2' || label === `v3 ${gvKey(x)}`))
          assert.ok(kinds.some(([, s]) => s['x-kubernetes-group-version-kind'][0].kind === d.kind), `${label}: ${d.kind}`);
        fields += [...seen].reduce((n, c) => n + Object.keys(schemas[c].properties ?? {}).length, 0);
      }
      // ObjectMeta alone has 17 fields, Node's types well over 80.
      assert.ok(fields > 300, `${fields} fields checked`);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// kubectl explain

/** The description the definition gives the field at `path` (list items are crossed implicitly). */
function descriptionAt(d: KindDefinition, path: readonly string[]): string {
  let s: Schema = d.schema;
  for (const field of path) {
    const body: Schema = s.items ?? s;
    const next = body.properties?.[field];
    assert.ok(next, `${d.kind} has ${path.join('.')}`);
    s = next;
  }
  assert.ok(s.description, `${d.kind}.${path.join('.')} is described`);
  return s.description;
}

const flat = (s: string) => s.replace(/\s+/g, ' ').trim();

describe('kubectl explain prints the descriptions (orch profile)', async () => {
  const server = await serverFor('orch');
  const defs = builtinKinds(server.naming, server.featureGates, { componentHealth: async () => [] }).filter((d) => !d.unlisted);
  /** The definition kubectl explains: the kind at the `--api-version` given, else the first served. */
  const kind = (k: string, args: readonly string[]) => {
    const apiVersion = args.find((a) => a.startsWith('--api-version='))?.slice('--api-version='.length);
    return defs.find((d) => d.kind === k && (!apiVersion || apiVersionOf(d) === apiVersion))!;
  };
  /** One field per kind (several for the ones the issue names): the kubectl argument, the kind, the path. */
  const cases: [string[], string, string[]][] = [
    [['ns.spec'], 'Namespace', ['spec']],
    [['namespaces.status.phase'], 'Namespace', ['status', 'phase']],
    [['lease.spec.holderIdentity'], 'Lease', ['spec', 'holderIdentity']],
    [['nodes.status.conditions'], 'Node', ['status', 'conditions']],
    [['componentstatuses.conditions.error'], 'ComponentStatus', ['conditions', 'error']],
    [['leasecandidates.spec.leaseName'], 'LeaseCandidate', ['spec', 'leaseName']],
    [['events.note', '--api-version=events.orch.io/v1'], 'Event', ['note']],
    [['events.involvedObject.fieldPath', '--api-version=v1'], 'Event', ['involvedObject', 'fieldPath']],
    [['ipaddresses.spec.parentRef'], 'IPAddress', ['spec', 'parentRef']],
    [['servicecidrs.spec.cidrs'], 'ServiceCIDR', ['spec', 'cidrs']],
    [['runtimeclasses.handler'], 'RuntimeClass', ['handler']],
    [['apiservices.spec.groupPriorityMinimum'], 'APIService', ['spec', 'groupPriorityMinimum']],
    [['nodes.metadata.finalizers'], 'Node', ['metadata', 'finalizers']],
  ];

  for (const [label, bin] of [
    ['the newest kubectl (OpenAPI v3)', undefined],
    ['kubectl 1.20 (OpenAPI v2 as protobuf)', kubectl120()],
  ] as const) {
    test(`${label}: one field of every kind`, async (t) => {
      const k = kubectlFor(server, { bin, label: 'explain' });
      t.diagnostic(`${k.bin}: ${k.version}`);
      const runs = await Promise.all(cases.map(([args]) => k.run(['explain', ...args])));
      cases.forEach(([args, kindName, path], i) => {
        const r = runs[i]!;
        const what = `kubectl explain ${args.join(' ')} (kubectl ${k.version})`;
        assert.equal(r.code, 0, `${what}\n${r.stderr}`);
        assert.match(r.stdout, new RegExp(`^KIND:\\s+${kindName}$`, 'm'), what);
        const text = descriptionAt(kind(kindName, args), path);
        assert.ok(flat(r.stdout).includes(flat(text)), `${what} prints ${JSON.stringify(text)}:\n${r.stdout}`);
        assert.doesNotMatch(r.stdout, /<no description>|<empty>/, what);
      });
    });
  }

  test('the kind itself is described (kubectl explain ns)', async () => {
    const out = await kubectlFor(server, { label: 'explain-kind' }).ok(['explain', 'ns']);
    assert.ok(flat(out).includes(flat(kind('Namespace', []).schema.description!)), out);
  });
});
