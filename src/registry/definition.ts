// One declarative definition per kind. Everything generic (routes, discovery, decoding,
// validation, selectors, the store) is derived from it; the strategy holds only what a schema
// cannot say.

import type { FieldError } from '../machinery/field-errors.ts';
import type { KObject } from '../machinery/meta.ts';
import type { Schema } from '../machinery/schema.ts';
import type { UserInfo } from '../request/user.ts';
import type { PrinterColumn } from './printers.ts';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export const ALL_VERBS: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export type NameRule = 'dns-subdomain' | 'dns-label' | 'path-segment';

export interface Strategy {
  /**
   * Defaults that need code rather than the schema, applied where Kubernetes' decoding defaults
   * (so the writer's managed fields include them): on every create (with the final name, after
   * generateName) and every update, patch and apply, through subresources too.
   */
  defaults?(obj: KObject): void;
  /** Defaults and cleanup before validation of a new object (e.g. clear status). */
  prepareForCreate?(obj: KObject): void;
  /** Before validation of an update: e.g. keep status from the old object. */
  prepareForUpdate?(obj: KObject, old: KObject): void;
  validate?(obj: KObject): FieldError[];
  /** `subresource`: the update is a write to it (`status`), whose own rules may be narrower. */
  validateUpdate?(obj: KObject, old: KObject, subresource?: string): FieldError[];
  /**
   * Reasons beyond `metadata.finalizers` that keep a deleted object in storage (a namespace's
   * `spec.finalizers`); the object goes once none remain.
   */
  pendingFinalization?(obj: KObject): boolean;
  /**
   * Why a delete of an object already terminating is refused (409 Conflict), as kube-apiserver
   * refuses to delete a namespace again while its content is being removed; undefined: allowed.
   */
  deleteConflict?(obj: KObject): string | undefined;
  /** When a delete marks the object terminating (e.g. set `status.phase`). */
  prepareForDelete?(obj: KObject): void;
  /** Warnings to return with a successful write. */
  warnings?(obj: KObject, old?: KObject): string[];
}

export interface SubresourceDefinition {
  /** `status`, `finalize`, … */
  name: string;
  verbs: readonly Verb[];
  /** Copy the part this subresource may change from the request onto the stored object. */
  apply(request: KObject, stored: KObject): KObject;
  /**
   * A subresource served as an object of another kind (`scale` answers an autoscaling/v1 Scale):
   * reads answer `read(stored)`; writes decode that kind (a patch applies to `read(stored)`) and
   * `apply` gets the decoded object as its request. Absent: the kind's own objects.
   */
  view?: SubresourceView;
}

/** The other kind a subresource is served as (SubresourceDefinition.view). */
export interface SubresourceView {
  def: KindDefinition;
  /**
   * The view of a stored object: for a read (throws the Status it is refused with), or as the
   * base an update's patch applies to.
   */
  read(stored: KObject, purpose: 'get' | 'update'): KObject;
  /**
   * Field ownership kept through the view: writes (apply included) record their managers on the
   * view's object, which carries `toView(stored)` as its managed fields, and `fromView` makes the
   * stored object's managed fields of what the write left there (a Scale's `spec.replicas` is the
   * object's replicas path). Absent: writes are recorded on the object as through any subresource,
   * and apply is not taken.
   */
  managedFields?: {
    toView(stored: KObject): unknown[];
    fromView(stored: KObject, viewEntries: unknown): unknown[];
  };
}

/**
 * A POST to `<name>/<subresource>` that answers with an object of another kind made from the
 * stored object and the request, storing nothing (serviceaccounts/<name>/token answers a
 * TokenRequest), as kube-apiserver's named creaters do.
 */
export interface NamedCreateDefinition {
  /** The subresource: `token`. */
  name: string;
  /**
   * The request's kind (it is also the answer's), one definition per accepted spelling of its
   * group (clients hard-code `authentication.k8s.io`): the body is decoded by the one its
   * apiVersion names, the profile's own (the first) when it names none of them.
   */
  request: readonly KindDefinition[];
  /** The answer, from the stored object and the decoded request; throws the Status it is refused with. */
  create(parent: KObject, request: KObject, opts: { dryRun: boolean }): Promise<KObject>;
}

export interface KindDefinition {
  /** '' for the core group. */
  group: string;
  version: string;
  kind: string;
  /** The URL segment (plural, lower case). */
  resource: string;
  singular: string;
  shortNames?: readonly string[];
  categories?: readonly string[];
  namespaced: boolean;
  verbs: readonly Verb[];
  /** The schema of the whole object, envelope and metadata included. */
  schema: Schema;
  /**
   * The kind's own validation compiles expressions (the CRD kind: the rules and patterns of the
   * schemas it holds): the expression language is loaded before its first write, not at start.
   */
  validationUsesExpressions?: boolean;
  nameRule: NameRule;
  /**
   * Whether `metadata.generation` is kept: 1 on create, +1 on each change outside metadata, and
   * outside status when the kind has a `status` subresource (a custom resource without one counts
   * its status changes too, as kube-apiserver's custom resource strategy does).
   */
  tracksGeneration: boolean;
  /** PUT of a missing object creates it. */
  allowCreateOnUpdate: boolean;
  /** Extra `fieldSelector` fields beyond metadata.name/metadata.namespace, with their value getters. */
  selectableFields?: Record<string, (obj: KObject) => string | undefined>;
  subresources?: readonly SubresourceDefinition[];
  /** POSTs to `<name>/<subresource>` that answer with another kind (NamedCreateDefinition). */
  namedCreates?: readonly NamedCreateDefinition[];
  /**
   * Table columns (`kubectl get`), Kubernetes' own for the kind, Name first; absent: the default
   * Name / Created At table.
   */
  printerColumns?: readonly PrinterColumn[];
  /**
   * Nested objects a Kubernetes typed object always has, below spec and status (Go value
   * structs: a Node's `status.nodeInfo`), as dotted paths. A write that adds one owns its fields,
   * not the struct itself, as when Kubernetes compares typed objects.
   */
  valueStructs?: readonly string[];
  strategy: Strategy;
  /**
   * Migrated to declarative validation: the schema's value rules under the kind's own fields
   * (everything but apiVersion, kind and metadata) restate hand-written checks of the strategy,
   * which marks the errors they duplicate with markCoveredByDeclarative. Such rules are then not
   * enforced at decoding; they run at validation time under the DeclarativeValidation gates
   * (src/registry/declarative-validation.ts).
   */
  declarativeValidation?: boolean;
  /**
   * false: deletes ignore `propagationPolicy` (no orphan or foreground finalizer is added), as for
   * kinds whose Kubernetes strategy has no garbage collection (Event).
   */
  garbageCollection?: boolean;
  /**
   * A kind whose objects are computed on every read (ComponentStatus) instead of stored: reads
   * answer from this, and its verbs are get and list only.
   */
  computed?: () => Promise<KObject[]>;
  /**
   * A kind whose create is answered, never stored (TokenReview, SelfSubjectReview): the decoded
   * request object and the user the request acts as go to this, and its answer is the response
   * (201), with the namespace of the path for a namespaced kind. Its only verb is create.
   */
  review?: (obj: KObject, requester: UserInfo, namespace?: string) => Promise<KObject>;
  /**
   * Served, but absent from discovery and OpenAPI: the Kubernetes spelling of a review endpoint
   * that kubectl hard-codes, in a profile whose groups are spelled otherwise (docs/wire-names.md).
   */
  unlisted?: boolean;
  /**
   * false: PATCH refuses `application/strategic-merge-patch+json` with 415, as kube-apiserver does for
   * custom resources (their schemas carry no Go struct tags to merge by). Built-in kinds support it
   * (absent or true).
   */
  strategicMergePatch?: boolean;
  /**
   * Served unless `--runtime-config` says otherwise (default true). Beta APIs introduced after
   * 1.22 are off by default (docs/rulings.md#r9).
   */
  enabledByDefault?: boolean;
  /**
   * The Kubernetes release that deprecated this version of the kind (`1.19`): every request routed
   * to it carries kube-apiserver's deprecation warning (deprecationWarning).
   */
  deprecatedIn?: string;
  /** The release a deprecated kind version is no longer served in (kube's `unavailable in v<release>+`). */
  removedIn?: string;
  /**
   * A deprecated version's warning in its own words (a CRD version's `deprecationWarning`, or
   * `<group>/<version> <Kind> is deprecated`), sent as deprecatedIn's is.
   */
  deprecationMessage?: string;
  /**
   * The kind's values are secret (Secret): an error never quotes the request body, where
   * Kubernetes would echo it (an apply body without a kind).
   */
  secretValues?: boolean;
  /**
   * Served from another kind's storage (core v1 Event from the events group's): objects are
   * converted on every write and read, so both kinds see the same objects with the same name, uid
   * and resourceVersion. Absent: the kind stores objects in its own form under its own prefix.
   */
  storedAs?: StorageConversion;
  /**
   * The version kube-apiserver keeps these objects at, when it is not the form this server stores
   * (its storageVersionHash names it): events of either group are core v1 Events there.
   */
  storageVersion?: { group: string; version: string; kind: string };
  /**
   * A check of a user's write against the user (after validation, before admission): throws the
   * Status it is refused with, as kube-apiserver's RBAC storage refuses escalation. Writes made by
   * the server itself (no user) are not checked.
   */
  guardWrite?(write: { user: UserInfo; namespace?: string; object: KObject; old?: KObject }): Promise<void>;
  /**
   * The kind's other served versions. The definition's own version is the storage version: every
   * object is kept in its form, and each other version is converted to and from it on every write
   * and read (expandVersions makes one definition per version, kept in this one's storage).
   */
  versions?: readonly ServedVersion[];
  /**
   * Every version the kind's objects may have been written at (a CRD's `spec.versions`, served or
   * not): managed-field entries recorded at any other version are dropped on the next write, as
   * kube-apiserver drops the managers it cannot convert to. A version given with its schema is
   * one only the kind's batch conversion (a webhook) reaches while it is not served: entries
   * recorded there are compared converted. Absent: every version is kept.
   */
  recordedVersions?: readonly { apiVersion: string; schema?: Schema }[];
  /**
   * The schema's defaults also apply when objects are read, as kube-apiserver defaults custom
   * resources decoded from storage: an object stored before a default existed is served with it.
   */
  defaultOnRead?: boolean;
  /**
   * Objects of this kind may be stored at other versions of it (a CRD whose storage version
   * changed, or any version with webhook conversion): each read converts them to the version it
   * serves. `{}` is the None conversion (apiVersion rewritten, synchronously); with `convert` (a
   * CRD's conversion webhook) every version but the storage one converts through it, batched and
   * awaited by the store. Absent: every object is stored at the definition's (storage) version.
   */
  conversion?: VersionConversion;
}

/** How a kind's objects convert between its versions (KindDefinition.conversion). */
export interface VersionConversion {
  /**
   * `objects` (each at a version of the kind other than `desiredApiVersion`, without a
   * resourceVersion) at `desiredApiVersion`, in the same order; rejects with the Status the request
   * fails with. Absent: the None conversion.
   */
  convert?(objects: readonly KObject[], desiredApiVersion: string): Promise<KObject[]>;
}

/**
 * Another served version of a kind (KindDefinition.versions): its name, the schema of its form
 * when it differs, and the lossless pair of conversions between its form and the storage
 * version's. Everything else (strategy, columns, selectable fields) is the storage version's,
 * applied through the conversions, unless the version gives its own.
 */
export interface ServedVersion {
  version: string;
  /** The whole object at this version; absent: the storage version's schema. */
  schema?: Schema;
  /**
   * This version's form to the storage version's, envelope aside (apiVersion and kind are set by
   * the caller); must not modify `obj`. Absent: the forms are the same.
   */
  toStorage?(obj: KObject): KObject;
  /** The storage version's form to this version's; must not modify `obj`. Absent: the same form. */
  fromStorage?(obj: KObject): KObject;
  /** Default: on for a GA version, off for alpha and beta ones (the contract's rule for betas after 1.22, docs/rulings.md#r9). */
  enabledByDefault?: boolean;
  /** As KindDefinition.deprecatedIn, for this version. */
  deprecatedIn?: string;
  /** As KindDefinition.deprecationMessage, for this version. */
  deprecationMessage?: string;
  /** As KindDefinition.removedIn, for this version. */
  removedIn?: string;
  /**
   * This version's own columns, selectable fields, subresources and strategy, run on its own form
   * (a CRD declares them per version); each absent: the storage version's, through the conversions.
   */
  printerColumns?: readonly PrinterColumn[];
  selectableFields?: Record<string, (obj: KObject) => string | undefined>;
  subresources?: readonly SubresourceDefinition[];
  strategy?: Strategy;
}

/**
 * How a kind is kept in another kind's storage: where, and a lossless pair of conversions between
 * the two forms (whole objects, envelope included). Multi-version kinds use the same pair between
 * a served version and the storage version.
 */
export interface StorageConversion {
  group: string;
  version: string;
  kind: string;
  resource: string;
  /** The served form to the stored form; must not modify `obj`. */
  toStorage(obj: KObject): KObject;
  /** The stored form to the served form; must not modify `obj`. */
  fromStorage(obj: KObject): KObject;
}

/**
 * kube-apiserver's warning for a deprecated kind version: `v1 ComponentStatus is deprecated in
 * v1.19+`, with `, unavailable in v1.38+` when its removal release is known.
 */
export const deprecationWarning = (d: Pick<KindDefinition, 'group' | 'version' | 'kind' | 'deprecatedIn' | 'deprecationMessage' | 'removedIn'>): string | undefined =>
  d.deprecationMessage ??
  (d.deprecatedIn ? `${apiVersionOf(d)} ${d.kind} is deprecated in v${d.deprecatedIn}+${d.removedIn ? `, unavailable in v${d.removedIn}+` : ''}` : undefined);

export const apiVersionOf = (d: Pick<KindDefinition, 'group' | 'version'>): string => (d.group ? `${d.group}/${d.version}` : d.version);

/** `/registry/<group|core>/<resource>/`: where a kind's objects are kept (its storage kind's, when stored as another). */
export function storagePrefix(d: Pick<KindDefinition, 'group' | 'resource' | 'storedAs'>): string {
  const at = d.storedAs ?? d;
  return `/registry/${at.group || 'core'}/${at.resource}/`;
}
