// The environments of each use of expressions outside schemas (authentication and authorization): the variables Kubernetes
// declares there and their types. Each is built once and shared; an `authorizer` extension (the
// authorizer library, which arrives with authorization) adds its types, functions and variable.
//
//   claims     authentication: claim validation rules and claim mappings; the token's claims
//   user       authentication: user validation rules; the mapped user (UserInfo)
//   request    authorization: webhook match conditions; the SubjectAccessReviewSpec
//
// These are Kubernetes' own types, not schemas of resources: their field names are not escaped
// (`request.resourceAttributes.namespace`, where a schema's property would be `__namespace__`).
//   object     a resource (and its old state): `object`, `oldObject`, free of schema

import type { Schema } from '../machinery/schema.ts';
import { CelEnvironment, type CelExtension } from './environment.ts';
import { SchemaEnvironment } from './schema.ts';

const string: Schema = { type: 'string' };
const strings: Schema = { type: 'array', items: string };
const extra: Schema = { type: 'object', additionalProperties: strings };

/** authentication.k8s.io UserInfo, as user validation rules see it. */
export const USER_INFO: Schema = { type: 'object', properties: { username: string, uid: string, groups: strings, extra } };

const selector: Schema = {
  type: 'object',
  properties: {
    rawSelector: string,
    requirements: { type: 'array', items: { type: 'object', properties: { key: string, operator: string, values: strings } } },
  },
};

/** authorization.k8s.io SubjectAccessReviewSpec, as webhook match conditions see it (`request`). */
export const SUBJECT_ACCESS_REVIEW_SPEC: Schema = {
  type: 'object',
  properties: {
    resourceAttributes: {
      type: 'object',
      properties: { namespace: string, verb: string, group: string, version: string, resource: string, subresource: string, name: string, fieldSelector: selector, labelSelector: selector },
    },
    nonResourceAttributes: { type: 'object', properties: { path: string, verb: string } },
    user: string,
    groups: strings,
    extra,
    uid: string,
  },
};

/** `claims`: the token's claims as JSON decodes them (numbers are doubles), map<string, dyn>. */
export function claimsEnvironment(extensions: CelExtension[] = []): CelEnvironment {
  return new CelEnvironment({ variables: [{ name: 'claims', type: 'map<string, dyn>' }], extensions });
}

/** `user`: the UserInfo an authenticator produced. */
export function userEnvironment(extensions: CelExtension[] = []): SchemaEnvironment {
  return new SchemaEnvironment([{ name: 'user', schema: USER_INFO }], extensions, { escapeNames: false });
}

/** `request`: the SubjectAccessReviewSpec of an authorization webhook's match conditions. */
export function authorizationRequestEnvironment(extensions: CelExtension[] = []): SchemaEnvironment {
  return new SchemaEnvironment([{ name: 'request', schema: SUBJECT_ACCESS_REVIEW_SPEC }], extensions, { escapeNames: false });
}

/** `object` and `oldObject`: a resource without a schema (dynamically typed). */
export function objectEnvironment(extensions: CelExtension[] = []): CelEnvironment {
  return new CelEnvironment({
    variables: [
      { name: 'object', type: 'dyn' },
      { name: 'oldObject', type: 'dyn' },
    ],
    extensions,
  });
}

/** A JSON document as a dynamically typed value: objects become maps, numbers stay doubles. */
export function jsonToValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(jsonToValue);
  if (typeof v === 'object' && v !== null) return new Map(Object.entries(v).map(([k, x]) => [k, jsonToValue(x)]));
  return v;
}
