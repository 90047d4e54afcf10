// The store of a kind whose create is answered, never stored (TokenReview, SelfSubjectReview): no
// storage, no cache, nothing to read back, as kube-apiserver serves them through a REST storage
// that implements create only.

import type { KObject } from '../machinery/meta.ts';
import { errors, type QualifiedResource } from '../machinery/status.ts';
import type { UserInfo } from '../request/user.ts';
import { apiVersionOf, type KindDefinition } from './definition.ts';
import type { EncodedObject } from './encoded.ts';
import type { ListResponse, ReadableStore } from './store.ts';

export class ReviewStore implements ReadableStore {
  readonly def: KindDefinition & { review: NonNullable<KindDefinition['review']> };
  readonly qualified: QualifiedResource;
  readonly apiVersion: string;

  constructor(
    def: KindDefinition & { review: NonNullable<KindDefinition['review']> },
  ) {
    this.def = def;
    this.qualified = { group: def.group, resource: def.resource };
    this.apiVersion = apiVersionOf(def);
  }

  /** The answer to a create of `obj` (decoded and checked against the schema) by `requester`, in `namespace` for a namespaced kind. */
  review(obj: KObject, requester: UserInfo, namespace?: string): Promise<KObject> {
    return this.def.review(obj, requester, namespace);
  }

  // Nothing is kept: the verb checks refuse reads before they get here.
  getEncoded(): Promise<EncodedObject> {
    return Promise.reject(errors.methodNotAllowed());
  }
  getBody(): Promise<Buffer | undefined> {
    return Promise.reject(errors.methodNotAllowed());
  }
  list(): Promise<ListResponse> {
    return Promise.reject(errors.methodNotAllowed());
  }
  listBody(): Promise<Buffer | undefined> {
    return Promise.reject(errors.methodNotAllowed());
  }
}

/** Whether `def` is a review kind (answered on create, stored nowhere). */
export const isReview = (def: KindDefinition): def is KindDefinition & { review: NonNullable<KindDefinition['review']> } => def.review !== undefined;
