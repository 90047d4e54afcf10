// The AuthenticationConfiguration (`--authentication-config`): its JWT authenticators and the
// anonymous authenticator, decoded strictly (unknown, repeated or mistyped fields are errors),
// validated with kube-apiserver's field errors, and its expressions compiled once in the
// expression environments of authentication (`claims`, `user`). The `--oidc-*` flags become one
// entry of the same shape (`jwtFromOidcFlags`), so one authenticator serves both.

import { yaml } from '../../machinery/yaml.ts';
import { child, fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { dns1123Subdomain } from '../../machinery/meta.ts';
import type { CelProgram } from '../../cel/environment.ts';
import { cel } from '../../cel/load.ts';
import type { AstNode } from '../../cel/rewrite.ts';
import { checkShape, jsonType, type Shape } from '../strict-shape.ts';

export interface Issuer {
  url: string;
  discoveryURL?: string;
  certificateAuthority?: string;
  audiences?: string[];
  audienceMatchPolicy?: string;
  egressSelectorType?: string;
}

export interface ClaimValidationRule {
  claim?: string;
  requiredValue?: string;
  expression?: string;
  message?: string;
}

export interface PrefixedClaimOrExpression {
  claim?: string;
  /** Required with `claim` (may be empty); absent and empty differ. */
  prefix?: string;
  expression?: string;
}

export interface ClaimOrExpression {
  claim?: string;
  expression?: string;
}

export interface ExtraMapping {
  key: string;
  valueExpression: string;
}

export interface UserValidationRule {
  expression: string;
  message?: string;
}

export interface JwtAuthenticatorConfig {
  issuer: Issuer;
  claimValidationRules?: ClaimValidationRule[];
  claimMappings: {
    username?: PrefixedClaimOrExpression;
    groups?: PrefixedClaimOrExpression;
    uid?: ClaimOrExpression;
    extra?: ExtraMapping[];
  };
  userValidationRules?: UserValidationRule[];
}

export interface AnonymousConfig {
  enabled: boolean;
  conditions?: { path: string }[];
}

export interface AuthenticationConfiguration {
  apiVersion: string;
  kind: string;
  jwt?: JwtAuthenticatorConfig[];
  anonymous?: AnonymousConfig;
}

/** Kubernetes' limit on JWT authenticators in one configuration. */
export const MAX_JWT_AUTHENTICATORS = 64;

/** The signing algorithms an issuer may use (RFC 7518 asymmetric ones), as kube-apiserver allows them. */
export const ALLOWED_SIGNING_ALGS: readonly string[] = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'];

// ------------------------------------------------------------------------------------------------
// Compiled form

export interface CompiledExpression {
  expression: string;
  program: CelProgram;
  message?: string;
}

export interface CompiledExtra {
  key: string;
  expression: string;
  program: CelProgram;
}

/** A validated JWT authenticator with its expressions compiled. */
export interface CompiledJwtAuthenticator {
  config: JwtAuthenticatorConfig;
  username?: CelProgram;
  groups?: CelProgram;
  uid?: CelProgram;
  extra: CompiledExtra[];
  claimRules: CompiledExpression[];
  userRules: CompiledExpression[];
  /** `claim` + `requiredValue` rules. */
  requiredClaims: Map<string, string>;
}

// ------------------------------------------------------------------------------------------------
// Flags

export interface OidcFlags {
  issuerUrl?: string;
  clientId?: string;
  usernameClaim?: string;
  usernamePrefix?: string;
  groupsClaim?: string;
  groupsPrefix?: string;
  requiredClaims?: Record<string, string>;
  /** PEM of `--oidc-ca-file`. */
  ca?: string;
}

/** The one JWT authenticator the `--oidc-*` flags describe, as kube-apiserver builds it from them. */
export function jwtFromOidcFlags(f: OidcFlags & { issuerUrl: string; clientId: string }): JwtAuthenticatorConfig {
  const claim = f.usernameClaim ?? 'sub';
  let prefix = f.usernamePrefix ?? '';
  // Claims other than email get the issuer as prefix unless one is given; "-" means none.
  if (prefix === '' && claim !== 'email') prefix = `${f.issuerUrl}#`;
  if (prefix === '-') prefix = '';
  const jwt: JwtAuthenticatorConfig = {
    issuer: { url: f.issuerUrl, audiences: [f.clientId], ...(f.ca !== undefined && { certificateAuthority: f.ca }) },
    claimMappings: { username: { claim, prefix } },
  };
  if (f.groupsClaim) jwt.claimMappings.groups = { claim: f.groupsClaim, prefix: f.groupsPrefix ?? '' };
  const required = Object.entries(f.requiredClaims ?? {});
  if (required.length) jwt.claimValidationRules = required.map(([claim, requiredValue]) => ({ claim, requiredValue }));
  return jwt;
}

// ------------------------------------------------------------------------------------------------
// Decoding

const ISSUER_FIELDS: Record<string, 'string' | 'strings'> = {
  url: 'string',
  discoveryURL: 'string',
  certificateAuthority: 'string',
  audiences: 'strings',
  audienceMatchPolicy: 'string',
  egressSelectorType: 'string',
};


const PREFIXED: Shape = { object: { claim: 'string', prefix: 'string', expression: 'string' } };
const CONFIG_SHAPE: Record<string, Shape> = {
  apiVersion: 'string',
  kind: 'string',
  jwt: {
    list: {
      issuer: { object: ISSUER_FIELDS },
      claimValidationRules: { list: { claim: 'string', requiredValue: 'string', expression: 'string', message: 'string' } },
      claimMappings: {
        object: {
          username: PREFIXED,
          groups: PREFIXED,
          uid: { object: { claim: 'string', expression: 'string' } },
          extra: { list: { key: 'string', valueExpression: 'string' } },
        },
      },
      userValidationRules: { list: { expression: 'string', message: 'string' } },
    },
  },
  anonymous: { object: { enabled: 'bool', conditions: { list: { path: 'string' } } } },
};

/** The configuration file's text as an AuthenticationConfiguration of `group` (v1, v1beta1 or v1alpha1); throws its decoding error. */
export function decodeAuthenticationConfiguration(text: string, group: string): AuthenticationConfiguration {
  if (text.trim() === '') throw new Error('empty config data');
  let doc: unknown;
  try {
    doc = yaml().parse(text, { uniqueKeys: true });
  } catch (e) {
    throw new Error(`error converting YAML to JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  if (jsonType(doc) !== 'object') throw new Error(`couldn't get version/kind; json parse error: expected an object`);
  const obj = doc as Record<string, unknown>;
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  if (!kind) throw new Error(`Object 'Kind' is missing in '${JSON.stringify(obj)}'`);
  const versions = ['v1', 'v1beta1', 'v1alpha1'].map((v) => `${group}/${v}`);
  if (kind !== 'AuthenticationConfiguration' || !versions.includes(apiVersion)) throw new Error(`no kind "${kind}" is registered for version "${apiVersion}"`);
  const unknown: string[] = [];
  const typeErrors: string[] = [];
  checkShape(obj, CONFIG_SHAPE, '', unknown, typeErrors);
  if (typeErrors.length) throw new Error(typeErrors[0]);
  if (unknown.length) throw new Error(`strict decoding error: ${unknown.map((u) => `unknown field "${u}"`).join(', ')}`);
  return obj as unknown as AuthenticationConfiguration;
}

// ------------------------------------------------------------------------------------------------
// Validation and compilation

export interface ValidationContext {
  /** Issuers of service account tokens: a JWT authenticator may not take theirs. */
  disallowedIssuers?: readonly string[];
  /** Domains of extra keys reserved to the product (`orch.io`, or `k8s.io` and `kubernetes.io`). */
  reservedDomains: readonly string[];
  /** Who the reserved domains belong to, for the message (`Kubernetes`). */
  reservedFor: string;
}

/** Every problem of the configuration (kube-apiserver's ValidateAuthenticationConfiguration), and the compiled authenticators. */
export function validateAuthenticationConfiguration(c: AuthenticationConfiguration, ctx: ValidationContext): { errors: FieldError[]; compiled: CompiledJwtAuthenticator[] } {
  const errors: FieldError[] = [];
  const compiled: CompiledJwtAuthenticator[] = [];
  const jwt = c.jwt ?? [];
  if (jwt.length > MAX_JWT_AUTHENTICATORS) return { errors: [fieldError.tooMany('jwt', jwt.length, MAX_JWT_AUTHENTICATORS)], compiled };
  const seenIssuers = new Set<string>();
  const seenDiscovery = new Set<string>();
  jwt.forEach((a, i) => {
    const path = child('jwt', i);
    const r = compileJwtAuthenticator(a, ctx, path);
    errors.push(...r.errors);
    if (r.compiled) compiled.push(r.compiled);
    const url = a.issuer?.url ?? '';
    if (seenIssuers.has(url)) errors.push(fieldError.duplicate(`${path}.issuer.url`, url));
    seenIssuers.add(url);
    const d = a.issuer?.discoveryURL ?? '';
    if (d) {
      if (seenDiscovery.has(d)) errors.push(fieldError.duplicate(`${path}.issuer.discoveryURL`, d));
      seenDiscovery.add(d);
    }
  });
  if (c.anonymous && !c.anonymous.enabled && (c.anonymous.conditions?.length ?? 0) > 0) {
    errors.push(fieldError.invalid('anonymous.conditions', c.anonymous.conditions, 'enabled should be set to true when conditions are defined'));
  }
  return { errors, compiled };
}

/** One JWT authenticator validated and compiled; field paths under `path` (none for the flags). */
export function compileJwtAuthenticator(a: JwtAuthenticatorConfig, ctx: ValidationContext, path = ''): { errors: FieldError[]; compiled?: CompiledJwtAuthenticator } {
  const errors: FieldError[] = [];
  const at = (name: string) => child(path, name);
  const issuer = a.issuer ?? { url: '' };
  errors.push(...validateIssuer(issuer, ctx, at('issuer')));
  const state = { usesEmail: false, usesEmailVerified: false };
  const out: CompiledJwtAuthenticator = { config: a, extra: [], claimRules: [], userRules: [], requiredClaims: new Map() };

  // Claim validation rules.
  const seenClaims = new Set<string>();
  const seenExpressions = new Set<string>();
  (a.claimValidationRules ?? []).forEach((rule, i) => {
    const p = child(at('claimValidationRules'), i);
    const claim = rule.claim ?? '';
    const expression = rule.expression ?? '';
    if (claim && expression) errors.push(fieldError.invalid(p, claim, "claim and expression can't both be set"));
    else if (!claim && !expression) errors.push(fieldError.required(p, 'claim or expression is required'));
    else if (claim) {
      if (rule.message) errors.push(fieldError.invalid(`${p}.message`, rule.message, 'may not be specified when claim is set'));
      if (seenClaims.has(claim)) errors.push(fieldError.duplicate(`${p}.claim`, claim));
      seenClaims.add(claim);
      out.requiredClaims.set(claim, rule.requiredValue ?? '');
    } else {
      if (rule.requiredValue) errors.push(fieldError.invalid(`${p}.requiredValue`, rule.requiredValue, 'may not be specified when expression is set'));
      if (seenExpressions.has(expression)) {
        errors.push(fieldError.duplicate(`${p}.expression`, expression));
        return;
      }
      seenExpressions.add(expression);
      const program = compileClaims(expression, `${p}.expression`, 'bool', errors);
      if (program) {
        out.claimRules.push({ expression, program, message: rule.message });
        state.usesEmailVerified ||= selects(program.root, 'email_verified');
      }
    }
  });

  // Claim mappings.
  const m = a.claimMappings ?? {};
  const mappings = at('claimMappings');
  out.username = prefixedClaimOrExpression(m.username ?? {}, `${mappings}.username`, true, errors);
  if (out.username) {
    state.usesEmail ||= selects(out.username.root, 'email');
    state.usesEmailVerified ||= selects(out.username.root, 'email_verified');
  }
  out.groups = prefixedClaimOrExpression(m.groups ?? {}, `${mappings}.groups`, false, errors);
  const uid = m.uid ?? {};
  if (uid.claim && uid.expression) errors.push(fieldError.invalid(`${mappings}.uid`, '', "claim and expression can't both be set"));
  else if (uid.expression) out.uid = compileClaims(uid.expression, `${mappings}.uid.expression`, undefined, errors);
  const seenKeys = new Set<string>();
  (m.extra ?? []).forEach((e, i) => {
    const p = child(`${mappings}.extra`, i);
    const key = e.key ?? '';
    errors.push(...domainPrefixedPath(`${p}.key`, key));
    if (key !== key.toLowerCase()) errors.push(fieldError.invalid(`${p}.key`, key, 'must be lowercase'));
    const domain = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
    if (ctx.reservedDomains.some((d) => domain === d || domain.endsWith(`.${d}`)))
      errors.push(fieldError.invalid(`${p}.key`, key, `${ctx.reservedDomains.join(', ')} and their subdomains are reserved for ${ctx.reservedFor} use`));
    if (seenKeys.has(key)) {
      errors.push(fieldError.duplicate(`${p}.key`, key));
      return;
    }
    seenKeys.add(key);
    if (!e.valueExpression) {
      errors.push(fieldError.required(`${p}.valueExpression`));
      return;
    }
    const program = compileClaims(e.valueExpression, `${p}.valueExpression`, undefined, errors);
    if (program) {
      out.extra.push({ key, expression: e.valueExpression, program });
      state.usesEmailVerified ||= selects(program.root, 'email_verified');
    }
  });
  if (state.usesEmail && !state.usesEmailVerified) {
    errors.push(
      fieldError.invalid(
        `${mappings}.username.expression`,
        m.username?.expression ?? '',
        'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
      ),
    );
  }

  // User validation rules.
  const seenUserRules = new Set<string>();
  (a.userValidationRules ?? []).forEach((rule, i) => {
    const p = child(at('userValidationRules'), i);
    if (!rule.expression) {
      errors.push(fieldError.required(`${p}.expression`));
      return;
    }
    if (seenUserRules.has(rule.expression)) {
      errors.push(fieldError.duplicate(`${p}.expression`, rule.expression));
      return;
    }
    seenUserRules.add(rule.expression);
    const program = compileIn(userEnv().env, rule.expression, `${p}.expression`, 'bool', errors);
    if (program) out.userRules.push({ expression: rule.expression, program, message: rule.message });
  });

  return errors.length ? { errors } : { errors, compiled: out };
}

function validateIssuer(issuer: Issuer, ctx: ValidationContext, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!issuer.url) errors.push(fieldError.required(`${path}.url`));
  else errors.push(...validateUrl(issuer.url, ctx.disallowedIssuers ?? [], `${path}.url`));
  const d = issuer.discoveryURL ?? '';
  if (d) {
    if (issuer.url && issuer.url.replace(/\/+$/, '') === d.replace(/\/+$/, '')) errors.push(fieldError.invalid(`${path}.discoveryURL`, d, 'discoveryURL must be different from URL'));
    errors.push(...validateUrl(d, [], `${path}.discoveryURL`));
  }
  const audiences = issuer.audiences ?? [];
  const policy = issuer.audienceMatchPolicy ?? '';
  if (audiences.length === 0) errors.push(fieldError.required(`${path}.audiences`, `at least one ${path}.audiences is required`));
  else {
    const seen = new Set<string>();
    audiences.forEach((aud, i) => {
      if (!aud) errors.push(fieldError.required(child(`${path}.audiences`, i)));
      if (seen.has(aud)) errors.push(fieldError.duplicate(child(`${path}.audiences`, i), aud));
      seen.add(aud);
    });
    if (audiences.length > 1 && policy !== 'MatchAny') errors.push(fieldError.invalid(`${path}.audienceMatchPolicy`, policy, 'audienceMatchPolicy must be MatchAny for multiple audiences'));
    if (audiences.length === 1 && policy && policy !== 'MatchAny') errors.push(fieldError.invalid(`${path}.audienceMatchPolicy`, policy, 'audienceMatchPolicy must be empty or MatchAny for single audience'));
  }
  if (issuer.certificateAuthority && !/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.test(issuer.certificateAuthority)) {
    errors.push(fieldError.invalid(`${path}.certificateAuthority`, '<omitted>', 'data does not contain any valid RSA or ECDSA certificates'));
  }
  const egress = issuer.egressSelectorType ?? '';
  if (egress && egress !== 'controlplane' && egress !== 'cluster') errors.push(fieldError.invalid(`${path}.egressSelectorType`, egress, 'egress selector must be either controlplane or cluster'));
  return errors;
}

function validateUrl(raw: string, disallowed: readonly string[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (disallowed.includes(raw)) errors.push(fieldError.invalid(path, raw, `URL must not overlap with disallowed issuers: [${[...disallowed].sort().join(' ')}]`));
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    errors.push(fieldError.invalid(path, raw, `parse ${JSON.stringify(raw)}: invalid URI for request`));
    return errors;
  }
  if (u.protocol !== 'https:') errors.push(fieldError.invalid(path, raw, 'URL scheme must be https'));
  if (u.username || u.password) errors.push(fieldError.invalid(path, raw, 'URL must not contain a username or password'));
  if (raw.includes('?') && u.search !== '') errors.push(fieldError.invalid(path, raw, 'URL must not contain a query'));
  if (raw.includes('#') && u.hash !== '') errors.push(fieldError.invalid(path, raw, 'URL must not contain a fragment'));
  return errors;
}

const HTTP_PATH = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;

function domainPrefixedPath(path: string, key: string): FieldError[] {
  if (!key) return [fieldError.required(path)];
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) return [fieldError.invalid(path, key, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const host = key.slice(0, slash);
  const errors = dns1123Subdomain(host).map((m) => fieldError.invalid(path, host, m));
  const rest = key.slice(slash + 1);
  if (!HTTP_PATH.test(rest)) errors.push(fieldError.invalid(path, rest, "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"));
  return errors;
}

function prefixedClaimOrExpression(m: PrefixedClaimOrExpression, path: string, required: boolean, errors: FieldError[]): CelProgram | undefined {
  if (m.expression && m.claim) errors.push(fieldError.invalid(path, '', "claim and expression can't both be set"));
  else if (!m.expression && !m.claim && required) errors.push(fieldError.required(path, 'claim or expression is required'));
  else if (m.expression) {
    if (m.prefix !== undefined) errors.push(fieldError.invalid(`${path}.prefix`, m.prefix, 'may not be specified when expression is set'));
    return compileClaims(m.expression, `${path}.expression`, undefined, errors);
  } else if (m.claim && m.prefix === undefined) {
    errors.push(fieldError.required(`${path}.prefix`, 'prefix is required when claim is set. It can be set to an empty string to disable prefixing'));
  }
  return undefined;
}

// (Compiling a configuration's expressions needs the expression language loaded: loadCel.)
let claims: ReturnType<typeof import('../../cel/uses.ts').claimsEnvironment> | undefined;
let user: ReturnType<typeof import('../../cel/uses.ts').userEnvironment> | undefined;
const claimsEnv = () => (claims ??= cel().uses.claimsEnvironment());
/** The `user` environment (built once). */
export const userEnv = () => (user ??= cel().uses.userEnvironment());

function compileClaims(expression: string, path: string, type: string | undefined, errors: FieldError[]): CelProgram | undefined {
  return compileIn(claimsEnv(), expression, path, type, errors);
}

function compileIn(env: { compile(e: string): CelProgram }, expression: string, path: string, type: string | undefined, errors: FieldError[]): CelProgram | undefined {
  let program: CelProgram;
  try {
    program = env.compile(expression);
  } catch (e) {
    if (e instanceof cel().errors.CelCompileError) {
      errors.push(fieldError.invalid(path, expression, `compilation failed: ${e.message}`));
      return undefined;
    }
    throw e;
  }
  if (type !== undefined && program.outputType !== type) {
    errors.push(fieldError.invalid(path, expression, `must evaluate to ${type}`));
    return undefined;
  }
  return program;
}

/** The expression selects `claims.<field>` (or `claims.?<field>`), as kube-apiserver looks for it. */
function selects(node: unknown, field: string): boolean {
  if (Array.isArray(node)) return node.some((n) => selects(n, field));
  if (typeof node !== 'object' || node === null || !('op' in node)) return false;
  const n = node as AstNode;
  const args = n.args;
  if ((n.op === '.' || n.op === '.?') && Array.isArray(args)) {
    const [target, name] = args as [AstNode, unknown];
    if (target?.op === 'id' && target.args === 'claims' && name === field) return true;
  }
  return selects(args, field);
}
