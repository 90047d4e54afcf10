// Request info: the API path parsed into group, version, namespace, resource, name, subresource and
// the logical verb, before authentication, because authorization and audit need it.

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** Logical verb: get, list, watch, create, update, patch, delete, deletecollection; or the lower-cased HTTP method. */
  verb: string;
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  parts: string[];
  /**
   * The path names nothing this server serves whatever the route table holds: a `.` or `..`
   * segment (plain or percent-encoded), an empty segment, or a trailing slash after a resource.
   * kube-apiserver matches paths segment by segment as sent, never cleaned, so these are 404s.
   */
  unroutable: boolean;
  /**
   * The path reached the resource under `namespaces/<namespace>/` (true for `namespaces/ns/leases`,
   * not for the namespace object `namespaces/ns`, whose name is also recorded as the namespace):
   * a cluster-scoped resource is never served there.
   */
  namespacePath?: boolean;
}

/** What a check that is not a request names (an access review, an impersonation, an expression's check). */
export interface CheckedResource {
  verb: string;
  apiGroup: string;
  apiVersion?: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** A resource check in the shape of a request's facts, so every authorizer reads it alike. */
/**
 * The facts of a request that authorization and audit policies read (verb, namespace, group,
 * resource, subresource, name; or the path), as one string: a key for decisions kept per user.
 * Each part that comes from the path is length-prefixed (a path may carry any character); the
 * verb (an HTTP token or a known word) and the last part are as they are.
 */
export function requestShapeKey(info: RequestInfo): string {
  return info.isResourceRequest
    ? `r ${info.verb} ${info.namespace.length}:${info.namespace}${info.apiGroup.length}:${info.apiGroup}${info.resource.length}:${info.resource}${info.subresource.length}:${info.subresource}${info.name}`
    : `n ${info.verb} ${info.path}`;
}

export function resourceCheckInfo(r: CheckedResource): RequestInfo {
  return {
    isResourceRequest: true,
    path: '',
    verb: r.verb,
    apiPrefix: '',
    apiGroup: r.apiGroup,
    apiVersion: r.apiVersion ?? '',
    namespace: r.namespace ?? '',
    resource: r.resource,
    subresource: r.subresource ?? '',
    name: r.name ?? '',
    parts: [],
    unroutable: false,
  };
}

/** A check of a path that names no resource (kube's AttributesRecord with a path). */
export function pathCheckInfo(path: string, verb: string): RequestInfo {
  return { isResourceRequest: false, path, verb, apiPrefix: '', apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '', parts: [], unroutable: false };
}

const specialVerbs = new Set(['proxy', 'watch']);
const namespaceSubresources = new Set(['status', 'finalize']);

/** Parse like kube-apiserver's RequestInfoFactory (`/api` and `/apis` prefixes). */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
    unroutable: false,
  };
  // Segments are split before they are decoded, so an encoded `/` stays inside its segment.
  const raw = path.startsWith('/') ? path.slice(1).split('/') : ['', ...path.split('/')];
  const trailingSlash = raw.length > 1 && raw[raw.length - 1] === '';
  if (trailingSlash) raw.pop();
  let segs = raw.map((s) => decodeURIComponent(s));
  info.unroutable = segs.some((s, i) => s === '.' || s === '..' || (s === '' && !(i === 0 && segs.length === 1)));
  if (segs.length === 1 && segs[0] === '') segs = [];
  if (segs.length === 0 || (segs[0] !== 'api' && segs[0] !== 'apis')) return info;
  info.apiPrefix = segs[0]!;
  segs = segs.slice(1);
  if (info.apiPrefix === 'apis') {
    if (segs.length === 0) return info;
    info.apiGroup = segs.shift()!;
  }
  if (segs.length === 0) return info;
  info.apiVersion = segs.shift()!;
  if (segs.length === 0) return info;
  info.isResourceRequest = true;
  if (trailingSlash) info.unroutable = true;
  let watchPath = false;
  if (specialVerbs.has(segs[0]!)) {
    // Deprecated /watch/ paths: the verb comes from the path.
    watchPath = segs[0] === 'watch';
    segs = segs.slice(1);
  }
  // `namespaces/<ns>/<resource>…` is namespaced. `namespaces/<name>[/status|/finalize]` is the
  // namespace object itself; like kube-apiserver, its name is also recorded as the namespace.
  if (segs[0] === 'namespaces' && segs.length > 1) {
    info.namespace = segs[1]!;
    if (segs.length > 2 && !namespaceSubresources.has(segs[2]!)) {
      segs = segs.slice(2);
      info.namespacePath = true;
    }
  }
  info.parts = segs;
  info.resource = segs[0] ?? '';
  info.name = segs[1] ?? '';
  info.subresource = segs[2] ?? '';
  const m = info.verb;
  if (m === 'get' || m === 'head') info.verb = info.name ? 'get' : 'list';
  else if (m === 'post') info.verb = 'create';
  else if (m === 'put') info.verb = 'update';
  else if (m === 'patch') info.verb = 'patch';
  else if (m === 'delete') info.verb = info.name ? 'delete' : 'deletecollection';
  if (info.verb === 'list' && isWatch(query)) info.verb = 'watch';
  if (watchPath && (m === 'get' || m === 'head')) info.verb = 'watch';
  // A list or watch of one object by name (`fieldSelector=metadata.name=<name>`) is authorized as
  // that name, as kube-apiserver's RequestInfoFactory does, so a rule's resourceNames can allow it.
  if ((info.verb === 'list' || info.verb === 'watch') && !info.name) info.name = nameFromFieldSelector(query.get('fieldSelector'));
  return info;
}

/**
 * The value of a `metadata.name=` (or `==`) term of a field selector, when the selector parses and
 * the value is a valid path segment; '' otherwise.
 */
function nameFromFieldSelector(selector: string | null): string {
  if (!selector) return '';
  const terms: string[] = [];
  let term = '';
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i]!;
    if (c === '\\' && i + 1 < selector.length) term += c + selector[++i];
    else if (c === ',') terms.push(term), (term = '');
    else term += c;
  }
  terms.push(term);
  let name = '';
  for (const t of terms) {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)(.*)$/.exec(t);
    if (!m) return '';
    if (m[1] === 'metadata.name' && m[2] !== '!=' && !name) name = m[3]!.trim().replace(/\\(.)/g, '$1');
  }
  const validSegment = name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');
  return validSegment ? name : '';
}

/**
 * Split a request target into its path as sent and its query. An absolute-form target loses its
 * scheme and authority; a backslash and `#` are escaped, so URL parsing (which would turn the first
 * into `/` and cut at the second) keeps them inside the segment they were sent in.
 */
export function splitRequestTarget(target: string): { path: string; url: URL } {
  const origin = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const escaped = origin.replace(/[\\#]/g, (c) => (c === '#' ? '%23' : '%5C'));
  const q = escaped.indexOf('?');
  const path = q < 0 ? escaped : escaped.slice(0, q);
  let url: URL;
  try {
    // Concatenated, not resolved against a base: a path starting `//` is not an authority.
    url = new URL(`http://localhost${path.startsWith('/') ? '' : '/'}${escaped}`);
  } catch {
    url = new URL('http://localhost/');
  }
  return { path, url };
}

function isWatch(q: URLSearchParams): boolean {
  const v = q.get('watch');
  return v !== null && v !== '0' && v.toLowerCase() !== 'false';
}
