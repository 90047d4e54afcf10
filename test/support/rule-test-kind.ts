// A test-only kind whose schema carries validation rules (x-kubernetes-validations) on every kind
// of node: strings, integers, int-or-string, map-type and set-type lists and their items, atomic
// lists, maps and their values, allOf entries, and transition rules (with and without
// optionalOldSelf). Served
// only by servers started with `extraKinds: [ruleTestKind]`.

import { ALL_VERBS, type KindDefinition } from '../../src/registry/definition.ts';
import { arr, int64, obj, objectSchema, str } from '../../src/registry/schemas.ts';
import type { Schema } from '../../src/machinery/schema.ts';

export const RULE_TEST_GROUP = 'rules.example.com';

/**
 * The bound of the expensive list: its rule's worst case stays under the static limit
 * (10,000,000), while a full list costs more than the per-call limit (1,000,000) at run time.
 */
export const ITEMS_MAX_ITEMS = 80;

const spec: Schema = obj(
  {
    // Strings: a length rule with a message, a regex rule with the default message.
    name: str({
      'x-kubernetes-validations': [{ rule: 'self.size() <= 10', message: 'must be at most 10 characters' }, { rule: "self.matches('^[a-z]+$')" }],
    }),
    replicas: int64(),
    maxReplicas: int64(),
    // A runtime error (division by zero) is reported with the rule.
    divisor: int64({ 'x-kubernetes-validations': [{ rule: '10 / self >= 1' }] }),
    // Int-or-string: a number or a name.
    port: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-validations': [{ rule: "type(self) == int ? self > 0 : self.matches('^[a-z]+$')", message: 'must be a positive number or a name' }] },
    // A map-type list: rules on the list and on its items, a transition rule correlated by key.
    ports: arr(
      obj(
        { name: str(), port: int64() },
        {
          required: ['name'],
          'x-kubernetes-validations': [
            { rule: 'self.port > 0 && self.port < 65536', message: 'port out of range', fieldPath: '.port' },
            { rule: 'self.port == oldSelf.port', message: 'port is immutable' },
          ],
        },
      ),
      { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], 'x-kubernetes-validations': [{ rule: 'self.size() <= 3', message: 'at most 3 ports', reason: 'FieldValueForbidden' }] },
    ),
    // A set-type list: items are never correlated, so their transition rule never runs.
    tags: arr(
      str({ maxLength: 63, 'x-kubernetes-validations': [{ rule: "self != 'reserved'", message: 'tag is reserved', reason: 'FieldValueForbidden' }, { rule: 'self == oldSelf', message: 'never checked' }] }),
      { 'x-kubernetes-list-type': 'set', maxItems: 16 },
    ),
    // An atomic list: a duplicate check.
    steps: arr(str({ maxLength: 63 }), { maxItems: 32, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.exists_one(y, y == x))', reason: 'FieldValueDuplicate' }] }),
    // A map: a rule on its keys and one on each value.
    labels: obj(
      {},
      {
        maxProperties: 16,
        additionalProperties: str({ maxLength: 63, 'x-kubernetes-validations': [{ rule: 'self.size() > 0', message: 'must not be empty' }] }),
        'x-kubernetes-validations': [{ rule: "self.all(k, k.startsWith('x-'))", messageExpression: "'keys must start with x-, found %s'.format([self.filter(k, !k.startsWith('x-'))[0]])" }],
      },
    ),
    // Map values correlated by key: existing values may not change, new ones may be added.
    frozen: obj({}, { maxProperties: 16, additionalProperties: str({ 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'values are immutable' }] }) }),
    // Transition rule on a string.
    mode: str({ 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'mode is immutable' }] }),
    // Transition rule with optionalOldSelf: runs on create too.
    stage: str({
      maxLength: 16,
      'x-kubernetes-validations': [
        {
          rule: "oldSelf.hasValue() ? self >= oldSelf.value() : self == 'alpha'",
          messageExpression: "oldSelf.hasValue() ? 'stage may not go back from %s'.format([oldSelf.value()]) : 'stage must start at alpha'",
          optionalOldSelf: true,
        },
      ],
    }),
    // A message expression that gives an empty string falls back to the message.
    note: str({ 'x-kubernetes-validations': [{ rule: "self != 'bad'", message: 'note must not be bad', messageExpression: "''" }] }),
    // allOf: rules and value validations the value must also satisfy, checked at the same node
    // (a rule in an entry sees `self` of the node's type; an entry's properties apply where the
    // node declares them).
    window: obj(
      { start: int64(), end: int64() },
      {
        allOf: [
          { 'x-kubernetes-validations': [{ rule: '!has(self.start) || !has(self.end) || self.start <= self.end', message: 'start must not be after end' }] },
          { properties: { start: { minimum: 0, 'x-kubernetes-validations': [{ rule: 'self % 2 == 0', message: 'start must be even' }] }, end: { maximum: 100 } } },
        ],
      },
    ),
    // Expensive rules: stopped by the per-call cost limit.
    items: arr(str({ maxLength: 8 }), { maxItems: ITEMS_MAX_ITEMS, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, self.all(z, x != y || y == z || true)))' }] }),
  },
  {
    'x-kubernetes-validations': [
      { rule: '!has(self.replicas) || !has(self.maxReplicas) || self.replicas <= self.maxReplicas', messageExpression: "'replicas %d exceeds %d'.format([self.replicas, self.maxReplicas])", fieldPath: '.replicas' },
    ],
  },
);

export const ruleTestKind: KindDefinition = {
  group: RULE_TEST_GROUP,
  version: 'v1',
  kind: 'RuleTest',
  resource: 'ruletests',
  singular: 'ruletest',
  namespaced: true,
  verbs: ALL_VERBS,
  nameRule: 'dns-subdomain',
  tracksGeneration: true,
  allowCreateOnUpdate: false,
  strategicMergePatch: false,
  schema: {
    ...objectSchema({ spec }),
    // A rule at the resource root, reported at a field of it with reason Required, and one reported
    // at the root itself.
    'x-kubernetes-validations': [
      { rule: 'has(self.spec)', message: 'spec is required', reason: 'FieldValueRequired', fieldPath: '.spec' },
      { rule: "self.metadata.name != 'forbidden'", message: 'this name is not allowed' },
    ],
  },
  strategy: {},
};
