// ABAC (`--authorization-mode=ABAC` with `--authorization-policy-file`): a file of policies, one
// JSON object a line, read once at start, as kube-apiserver's pkg/auth/authorizer/abac reads it.
// A request is allowed when some policy matches its user (or group), its verb (a read-only policy
// matches get, list and watch only) and either its resource (namespace, resource, API group) or,
// for a request that names no resource, its path; otherwise ABAC has no opinion ("No policy
// matched.").
//
// Lines: `{"apiVersion":"abac.authorization.<domain>/v1beta1","kind":"Policy","spec":{…}}` (the
// domain is `orch.io`, or `kubernetes.io` in the kubernetes profile), the same at `v0`, or the
// unversioned legacy form (fields at the top, no apiVersion or kind), converted as kube converts
// v0: no user or group means every authenticated user, no namespace or resource means all of
// them and every non-resource path, and any API group. A user or group of `*` means every
// authenticated user (system:authenticated), never an anonymous one. Blank lines and lines
// starting with `#` are skipped. Unknown fields are ignored; a line that is not such an object
// stops the start with kube's message and the line's number.

import { readFileSync } from 'node:fs';
import type { Naming } from '../../naming.ts';
import type { RequestInfo } from '../../request/request-info.ts';
import type { UserInfo } from '../../request/user.ts';
import type { Attributes, Authorizer } from './authorizer.ts';

const ALL_AUTHENTICATED = 'system:authenticated';
/** Go's bufio.Scanner refuses a line (with its newline) longer than its 64 KiB buffer. */
const MAX_LINE_BYTES = 64 * 1024;

/** The internal Policy spec every version converts to. */
export interface PolicySpec {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

/** A rule as SelfSubjectRulesReview reports it (kube's RulesFor of the ABAC authorizer). */
export interface AbacRules {
  resourceRules: { verbs: string[]; apiGroups: string[]; resources: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs: string[] }[];
}

/** The policy file's group: `abac.authorization.orch.io`, `abac.authorization.kubernetes.io`. */
export function abacGroup(naming: Naming): string {
  return `abac.authorization.${naming.labelDomain}`;
}

type Json = Record<string, unknown>;

const GO_TYPE: Record<string, string> = { string: 'string', boolean: 'bool' };

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** encoding/json's type error for a field of the wrong JSON type (null reads as the zero value). */
function field(o: Json, name: string, kind: 'string' | 'boolean', struct: string): string | boolean {
  const v = o[name];
  if (v === undefined || v === null) return kind === 'string' ? '' : false;
  if (typeof v !== kind) throw new Error(`json: cannot unmarshal ${jsonType(v)} into Go struct field ${struct}.${name} of type ${GO_TYPE[kind]}`);
  return v as string | boolean;
}

const str = (o: Json, name: string, struct: string) => field(o, name, 'string', struct) as string;
const bool = (o: Json, name: string, struct: string) => field(o, name, 'boolean', struct) as boolean;

function fromV1beta1(doc: Json): PolicySpec {
  const raw = doc.spec;
  if (raw !== undefined && raw !== null && jsonType(raw) !== 'object') throw new Error(`json: cannot unmarshal ${jsonType(raw)} into Go struct field Policy.spec of type v1beta1.PolicySpec`);
  const s = (raw ?? {}) as Json;
  const at = 'PolicySpec.spec';
  const spec: PolicySpec = {
    user: str(s, 'user', at),
    group: str(s, 'group', at),
    readonly: bool(s, 'readonly', at),
    apiGroup: str(s, 'apiGroup', at),
    resource: str(s, 'resource', at),
    namespace: str(s, 'namespace', at),
    nonResourcePath: str(s, 'nonResourcePath', at),
  };
  // In v1beta1 a `*` user or group is every authenticated user.
  if (spec.user === '*' || spec.group === '*') Object.assign(spec, { user: '', group: ALL_AUTHENTICATED });
  return spec;
}

function fromV0(doc: Json): PolicySpec {
  const at = 'Policy';
  const user = str(doc, 'user', at);
  const group = str(doc, 'group', at);
  const readonly = bool(doc, 'readonly', at);
  const resource = str(doc, 'resource', at);
  const namespace = str(doc, 'namespace', at);
  const spec: PolicySpec = { user, group, readonly, resource: resource || '*', namespace: namespace || '*', apiGroup: '*', nonResourcePath: '' };
  if (!user && !group) spec.group = ALL_AUTHENTICATED;
  if (user === '*' || group === '*') Object.assign(spec, { user: '', group: ALL_AUTHENTICATED });
  // No namespace and no resource: the policy also covers every non-resource path.
  if (!namespace && !resource) spec.nonResourcePath = '*';
  return spec;
}

/** One line's policy and whether it was the unversioned form; throws with the decoder's message. */
function decodeLine(line: string, group: string): [PolicySpec, boolean] {
  let doc: unknown;
  try {
    doc = JSON.parse(line);
  } catch (e) {
    throw new Error(`couldn't get version/kind; json parse error: ${(e as Error).message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, ' in JSON')}`);
  }
  if (jsonType(doc) !== 'object') throw new Error(`couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonType(doc)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
  const o = doc as Json;
  for (const k of ['apiVersion', 'kind']) {
    if (o[k] !== undefined && o[k] !== null && typeof o[k] !== 'string') throw new Error(`couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonType(o[k])} into Go struct field .${k} of type string`);
  }
  const apiVersion = (o.apiVersion as string | undefined) ?? '';
  const kind = (o.kind as string | undefined) ?? '';
  // Without a version or a kind the line is the legacy form, read as v0.
  if (!apiVersion || !kind) return [fromV0(o), true];
  if (kind === 'Policy' && apiVersion === `${group}/v1beta1`) return [fromV1beta1(o), false];
  if (kind === 'Policy' && apiVersion === `${group}/v0`) return [fromV0(o), false];
  throw new Error(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "abac"`);
}

/**
 * The policies of a policy file's text; `path` names the file in errors, as kube names it, and
 * `warn` hears kube's warning when some line is of the unversioned form.
 */
export function parsePolicies(text: string, path: string, group: string, warn?: (message: string) => void): PolicySpec[] {
  const policies: PolicySpec[] = [];
  let unversioned = 0;
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    const withNewline = Buffer.byteLength(line) + (i < lines.length - 1 || text.endsWith('\n') ? 1 : 0);
    if (withNewline > MAX_LINE_BYTES) throw new Error(`error reading policy file ${path}: bufio.Scanner: token too long`);
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    let decoded: [PolicySpec, boolean];
    try {
      decoded = decodeLine(line, group);
    } catch (e) {
      throw new Error(`error reading policy file ${path}, line ${i + 1}: ${line}: ${(e as Error).message}`);
    }
    policies.push(decoded[0]);
    if (decoded[1]) unversioned++;
  }
  if (unversioned > 0) warn?.(`Policy file ${path} contained unversioned rules. See docs/abac.md for ABAC file format details.`);
  return policies;
}

const READ_ONLY = new Set(['get', 'list', 'watch']);

function subjectMatches(p: PolicySpec, user: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    if (p.user !== '*' && p.user !== user.name) return false;
    matched = true;
  }
  if (p.group) {
    if (p.group !== '*' && !user.groups.includes(p.group)) return false;
    matched = true;
  }
  return matched;
}

function resourceMatches(p: PolicySpec, i: RequestInfo): boolean {
  return i.isResourceRequest && (p.namespace === '*' || p.namespace === i.namespace) && (p.resource === '*' || p.resource === i.resource) && (p.apiGroup === '*' || p.apiGroup === i.apiGroup);
}

function nonResourceMatches(p: PolicySpec, i: RequestInfo): boolean {
  if (i.isResourceRequest) return false;
  const want = p.nonResourcePath;
  if (want === '*' || want === i.path) return true;
  return want.endsWith('*') && i.path.startsWith(want.replace(/\*+$/, ''));
}

export function policyMatches(p: PolicySpec, { user, info }: Attributes): boolean {
  if (!subjectMatches(p, user)) return false;
  // A read-only policy matches reads only.
  if (p.readonly && !READ_ONLY.has(info.verb)) return false;
  return resourceMatches(p, info) || nonResourceMatches(p, info);
}

export interface AbacAuthorizer extends Authorizer {
  readonly policies: readonly PolicySpec[];
  rulesFor(user: UserInfo, namespace: string): AbacRules;
}

export function abacAuthorizer(policies: readonly PolicySpec[]): AbacAuthorizer {
  return {
    policies,
    async authorize(attrs) {
      for (const p of policies) if (policyMatches(p, attrs)) return { decision: 'allow' };
      return { decision: 'no-opinion', reason: 'No policy matched.' };
    },
    rulesFor(user, namespace) {
      const out: AbacRules = { resourceRules: [], nonResourceRules: [] };
      for (const p of policies) {
        if (!subjectMatches(p, user) || (p.namespace !== '*' && p.namespace !== namespace)) continue;
        const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*'];
        if (p.resource) out.resourceRules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource] });
        if (p.nonResourcePath) out.nonResourceRules.push({ verbs: [...verbs], nonResourceURLs: [p.nonResourcePath] });
      }
      return out;
    },
  };
}

/** The ABAC authorizer of `--authorization-policy-file` (read once; errors as kube-apiserver words them). */
export function abacFromFile(path: string, naming: Naming, warn?: (message: string) => void): AbacAuthorizer {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? `open ${path}: no such file or directory` : `open ${path}: ${(e as Error).message}`);
  }
  return abacAuthorizer(parsePolicies(text, path, abacGroup(naming), warn));
}
