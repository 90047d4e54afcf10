// TokenRequest (`authentication/v1`): what `POST …/serviceaccounts/<name>/token` takes and answers
// (`kubectl create token`). Nothing is stored: the server signs a token for the account, for the
// audiences asked (the API's by default), for the lifetime asked (an hour by default, ten minutes
// at least, capped by `--service-account-max-token-expiration`), optionally bound to a Secret or a
// Node that must exist while the token is used.

import { fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { errors } from '../../machinery/status.ts';
import type { KObject } from '../../machinery/meta.ts';
import type { Naming } from '../../naming.ts';
import type { KindDefinition, NamedCreateDefinition } from '../definition.ts';
import { arr, int64, obj, objectSchema, str, time } from '../schemas.ts';

/** What signs service-account tokens and reads what they are bound to (the server's authentication gives it). */
export interface TokenIssuer {
  readonly apiAudiences: readonly string[];
  readonly maxExpirationSeconds: number | undefined;
  issue(r: { namespace: string; name: string; uid: string; audiences: readonly string[]; expirationSeconds: number; bound?: { kind: 'Secret' | 'Node' | 'Pod'; name: string; uid: string } }): Promise<{ token: string; expiresAt: number }>;
  /** A Secret of the namespace or a Node as it is now; undefined when there is none. */
  bound(kind: 'Secret' | 'Node' | 'Pod', namespace: string, name: string): Promise<{ uid: string; deleting: boolean } | undefined>;
}

const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;

/** The request kind in one spelling of the authentication group. */
function tokenRequestKind(group: string): KindDefinition {
  return {
    group,
    version: 'v1',
    kind: 'TokenRequest',
    resource: 'tokenrequests',
    singular: 'tokenrequest',
    namespaced: true,
    verbs: ['create'],
    nameRule: 'dns-subdomain',
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    schema: objectSchema({
      spec: obj({
        audiences: arr(str(), { 'x-kubernetes-list-type': 'atomic' }),
        expirationSeconds: int64(),
        boundObjectRef: obj({ kind: str(), apiVersion: str(), name: str(), uid: str() }),
      }),
      status: obj({ token: str(), expirationTimestamp: time() }),
    }),
    strategy: {},
  };
}

interface TokenRequestObject extends KObject {
  spec?: { audiences?: string[]; expirationSeconds?: number; boundObjectRef?: { kind?: string; apiVersion?: string; name?: string; uid?: string } };
  status?: { token?: string; expirationTimestamp?: string };
}

/** `serviceaccounts/<name>/token`: a token for the stored account. */
export function serviceAccountTokenCreate(naming: Naming, issuer: TokenIssuer): NamedCreateDefinition {
  const groups = [naming.group('authentication'), ...naming.wire.groupDomains.filter((d) => d !== naming.groupSuffix).map((d) => `authentication.${d}`)];
  return {
    name: 'token',
    request: groups.map(tokenRequestKind),
    async create(parent, request, { dryRun }) {
      const req = request as TokenRequestObject;
      const namespace = parent.metadata.namespace!;
      const name = parent.metadata.name!;
      const spec = (req.spec ??= {});
      spec.expirationSeconds ??= DEFAULT_EXPIRATION_SECONDS;
      const errs: FieldError[] = [];
      if (spec.expirationSeconds < MIN_EXPIRATION_SECONDS) errs.push(fieldError.invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 10 minutes'));
      if (spec.expirationSeconds > MAX_EXPIRATION_SECONDS) errs.push(fieldError.invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration larger than 2^32 seconds'));
      if (errs.length) throw errors.invalid(naming.group('authentication'), 'TokenRequest', req.metadata?.name ?? '', errs);
      if (parent.metadata.deletionTimestamp) throw errors.notFound({ group: '', resource: 'serviceaccounts' }, name);
      if (!spec.audiences?.length) spec.audiences = [...issuer.apiAudiences];
      if (issuer.maxExpirationSeconds !== undefined && spec.expirationSeconds > issuer.maxExpirationSeconds) spec.expirationSeconds = issuer.maxExpirationSeconds;
      let bound: { kind: 'Secret' | 'Node' | 'Pod'; name: string; uid: string } | undefined;
      // An empty reference (a protobuf body carries the message even when nothing is bound) binds nothing.
      const ref = spec.boundObjectRef && Object.values(spec.boundObjectRef).some((v) => v !== undefined && v !== '') ? spec.boundObjectRef : undefined;
      if (!ref) delete spec.boundObjectRef;
      if (ref) {
        const kind = ref.kind;
        if ((kind !== 'Secret' && kind !== 'Node' && kind !== 'Pod') || (ref.apiVersion !== undefined && ref.apiVersion !== 'v1'))
          throw errors.badRequest(`cannot bind token for serviceaccount "${name}" to object of type ${ref.apiVersion ?? ''}, Kind=${kind ?? ''}`);
        if (!ref.name) throw errors.badRequest('the name of the bound object reference is required');
        const resource = kind === 'Secret' ? 'secrets' : kind === 'Node' ? 'nodes' : 'pods';
        const live = await issuer.bound(kind, namespace, ref.name);
        if (!live || live.deleting) throw errors.notFound({ group: '', resource }, ref.name);
        if (ref.uid && ref.uid !== live.uid)
          throw errors.conflict({ group: '', resource: kind }, ref.name, `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
        bound = { kind, name: ref.name, uid: live.uid };
      }
      if (dryRun) return req;
      const { token, expiresAt } = await issuer.issue({ namespace, name, uid: parent.metadata.uid!, audiences: spec.audiences, expirationSeconds: spec.expirationSeconds, bound });
      req.status = { token, expirationTimestamp: new Date(expiresAt * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') };
      return req;
    },
  };
}
