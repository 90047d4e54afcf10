// The identity reviews of the authentication group: SelfSubjectReview (who am I, after
// impersonation) and TokenReview (whom does this bearer token authenticate). Both are answered on
// create from the request and stored nowhere, as kube-apiserver serves them.

import type { Naming } from '../../naming.ts';
import type { KObject } from '../../machinery/meta.ts';
import type { Schema } from '../../machinery/schema.ts';
import { errors } from '../../machinery/status.ts';
import type { UserInfo } from '../../request/user.ts';
import type { KindDefinition } from '../definition.ts';
import { arr, bool, obj, objectSchema, str } from '../schemas.ts';

/** What a token authenticates, as the server's token authenticators answer it (TokenReview's status). */
export interface TokenReviewResult {
  authenticated: boolean;
  user?: UserInfo;
  /** The audiences the token is valid for, of those asked (or the server's). */
  audiences?: string[];
  /** Why the token was not authenticated: never the token itself. */
  error?: string;
}

/** Runs a bearer token through the server's token authenticators, for `audiences` (default: the server's). */
export type TokenReviewer = (token: string, audiences: readonly string[]) => Promise<TokenReviewResult>;

const userInfoSchema = (about: string): Schema =>
  obj(
    {
      username: str({ description: 'The name that uniquely identifies this user among all active users.' }),
      uid: str({ description: 'A unique value that identifies this user across time: a user deleted and another added with the same name have different uids.' }),
      groups: arr(str(), { 'x-kubernetes-list-type': 'atomic', description: 'The names of the groups this user is a part of.' }),
      extra: {
        type: 'object',
        additionalProperties: arr(str()),
        description: 'Any additional information the authenticator provided, such as the scopes of a token or the credential it was issued for.',
      },
    },
    { description: about, typeDescription: 'The attributes of a user: name, uid, groups and extra information.' },
  );

/** The wire form of a user: username, uid, groups and extra, empty ones left out as Go leaves them. */
function userInfo(u: UserInfo): Record<string, unknown> {
  return {
    ...(u.name ? { username: u.name } : {}),
    ...(u.uid ? { uid: u.uid } : {}),
    ...(u.groups.length ? { groups: [...u.groups] } : {}),
    ...(u.extra && Object.keys(u.extra).length ? { extra: structuredClone(u.extra) } : {}),
  };
}

/** Now, to the second, as metadata times are written. */
const now = (): string => `${new Date().toISOString().slice(0, 19)}Z`;

const reviewKind = (naming: Naming, kind: string, resource: string, schema: Schema, review: KindDefinition['review']): KindDefinition => ({
  group: naming.group('authentication'),
  version: 'v1',
  kind,
  resource,
  singular: resource.replace(/s$/, ''),
  namespaced: false,
  verbs: ['create'],
  nameRule: 'path-segment',
  tracksGeneration: false,
  allowCreateOnUpdate: false,
  schema,
  review,
  strategy: {},
});

export function selfSubjectReviewDefinition(naming: Naming): KindDefinition {
  const schema = objectSchema(
    {
      status: obj(
        { userInfo: userInfoSchema('The user attributes of the user making this request.') },
        { description: 'Filled in by the server with the attributes of the user making the request.', typeDescription: 'What the server knows of the user making the request.' },
      ),
    },
    'The user information the server has about the user making this request. Under impersonation it is the impersonated user; extra keys set by impersonation or an authenticating proxy are lower case.',
  );
  return reviewKind(naming, 'SelfSubjectReview', 'selfsubjectreviews', schema, async (obj, requester) => ({
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: { creationTimestamp: now() },
    status: { userInfo: userInfo(requester) },
  }));
}

export function tokenReviewDefinition(naming: Naming, reviewToken: TokenReviewer | undefined, apiAudiences: readonly string[]): KindDefinition {
  const schema = objectSchema(
    {
      spec: obj(
        {
          token: str({ description: 'The opaque bearer token to authenticate.' }),
          audiences: arr(str(), {
            'x-kubernetes-list-type': 'atomic',
            description:
              'The identifiers the resource server presented with the token identifies as. Audience-aware authenticators check that the token was meant for at least one of them; empty means the audiences of this server.',
          }),
        },
        { description: 'What to authenticate: the token, and the audiences it is presented to.', typeDescription: 'A token to authenticate and the audiences it is presented to.' },
      ),
      status: obj(
        {
          authenticated: { ...bool(), description: 'Whether the token was authenticated.' },
          user: userInfoSchema('The user the token authenticates.'),
          audiences: arr(str(), {
            'x-kubernetes-list-type': 'atomic',
            description:
              'The audiences the token is valid for: those of spec.audiences it was issued for, or, when spec.audiences was empty, the audiences of this server. An authenticator that cannot tell leaves it empty.',
          }),
          error: str({ description: 'Why the token was not authenticated, when it was not; never the token.' }),
        },
        { description: 'Filled in by the server: whether the token authenticates, and whom.', typeDescription: 'The result of a token review: whether the token authenticated, whom, and for which audiences.' },
      ),
    },
    'Authenticates a bearer token as the server would, and tells who it is. A webhook authenticator may cache its answers.',
  );
  return reviewKind(naming, 'TokenReview', 'tokenreviews', schema, async (obj) => {
    const spec = (obj.spec ?? {}) as { token?: string; audiences?: string[] };
    if (!spec.token) throw errors.badRequest('token is required for TokenReview in authentication');
    const audiences = spec.audiences?.length ? spec.audiences : apiAudiences;
    const r: TokenReviewResult = reviewToken ? await reviewToken(spec.token, audiences) : { authenticated: false };
    const status: Record<string, unknown> = {
      ...(r.authenticated ? { authenticated: true } : {}),
      // Go writes the user struct even when empty.
      user: r.user ? userInfo(r.user) : {},
      ...(r.user && r.audiences?.length ? { audiences: [...r.audiences] } : {}),
      ...(r.error ? { error: r.error } : {}),
    };
    const answer: KObject = { apiVersion: obj.apiVersion, kind: obj.kind, metadata: obj.metadata, spec: obj.spec, status };
    return answer;
  });
}
