// The block YAML reader of CRD files: what it reads it reads as the YAML library does (YAML 1.2,
// core schema); what it does not read (undefined) the library reads. Checked on the shapes CRD
// generators write, on what it must leave to the library, and on generated documents and
// mutated ones compared with the library.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBlockYaml } from '../../src/server/block-yaml.ts';
import { yaml } from '../../src/machinery/yaml.ts';

type Parsed = { ok: true; docs: unknown[] } | { ok: false };

function library(text: string): Parsed {
  const docs = Array.from(yaml().parseAllDocuments(text, { uniqueKeys: false }));
  if (docs.some((d) => d.errors.length > 0)) return { ok: false };
  return { ok: true, docs: docs.map((d) => d.toJS() as unknown) };
}

/** The reader agrees with the library, or leaves the text to it; `read`: it must read this text itself. */
function agrees(text: string, read = false): void {
  const fast = parseBlockYaml(text);
  if (fast === undefined) {
    assert.ok(!read, `left to the library: ${JSON.stringify(text)}`);
    return;
  }
  const lib = library(text);
  assert.ok(lib.ok, `read what the library refuses: ${JSON.stringify(text)}`);
  assert.deepEqual(fast, lib.docs, JSON.stringify(text));
}

const CRD = `# generated
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.16.0
    api-approved.kubernetes.io: "https://github.com/kubernetes/enhancements/pull/1111"
  name: widgets.example.com
spec:
  group: example.com
  names:
    categories:
    - all
    kind: Widget
    listKind: WidgetList
    plural: widgets
    shortNames: []
    singular: widget
  scope: Namespaced
  versions:
  - additionalPrinterColumns:
    - jsonPath: .status.conditions[?(@.type=="Ready")].status
      name: Ready
      type: string
    name: v1
    schema:
      openAPIV3Schema:
        description: |-
          Widget is a thing.

          It has: several paragraphs, "quotes" and 'apostrophes' # not a comment
        properties:
          spec:
            description: 'APIVersion defines the versioned schema of this representation
              of an object. It''s folded

              with an empty line.'
            properties:
              port:
                default: 8080
                format: int32
                maximum: 65535
                minimum: -1
                type: integer
              ratio:
                default: 0.5
                type: number
              hex:
                default: 0x1F
                x-kubernetes-int-or-string: true
              on:
                default: true
                type: boolean
              empty:
                default: ""
                type: string
              nothing:
                default: ~
                nullable: true
                type: string
              escaped:
                default: "tab\\there \\u00e9 \\"q\\" \\\\ line\\
                  joined"
                type: string
              rule:
                type: object
                x-kubernetes-validations:
                - message: a needs b
                  rule: '!has(self.a) || (has(self.b) && self.b
                    != '''')'
                - rule: self.x == 1 ||
                    self.y == 2
                  messageExpression: "'x is ' +
                    string(self.x)"
            required:
            - port
            type: object
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
        type: object
    served: true
    storage: true
    subresources:
      status: {}
---
# a second document: a list
- a
-   b: 1
    c:
      - d
- - nested
`;

test('reads what CRD generators write as the library reads it', () => {
  const fast = parseBlockYaml(CRD.split('---\n# a second')[0]!);
  assert.ok(fast, 'the reader left a generated CRD to the library');
  agrees(CRD.split('---\n# a second')[0]!, true);
  const spec = (fast[0] as { spec: { versions: { schema: { openAPIV3Schema: { description: string; properties: { spec: { description: string } } } } }[] } }).spec;
  const schema = spec.versions[0]!.schema.openAPIV3Schema;
  assert.equal(schema.description, `Widget is a thing.\n\nIt has: several paragraphs, "quotes" and 'apostrophes' # not a comment`);
  assert.equal(schema.properties.spec.description, "APIVersion defines the versioned schema of this representation of an object. It's folded\nwith an empty line.");
});

test('agrees with the library on the scalar types and forms of the core schema', () => {
  const values = ['a', 'true', 'True', 'TRUE', 'tRUE', 'false', 'null', 'Null', 'NULL', '~', '1', '-1', '+1', '007', '0o17', '0o8', '0x1F', '0xG', '1.5', '1.', '.5', '-.5', '1e3', '1.5E-3', '.inf', '.nan', '1_000', 'a b', 'a  b', 'k8s.io/x', 'http://h:80/p', ':x', '?x', '-x', '-', 'x:', "'s'", '"d"', "'it''s'", '"a\\"b"', '"\\x41\\u00e9\\U0001F600"', '"\\q"', '[]', '{}', '[a]', '{a: 1}', '&a x', '*a', '!t x', '|', '>', 'a # c', 'a #c', 'a#c'];
  for (const v of values) {
    agrees(`k: ${v}\n`);
    agrees(`- ${v}\n`);
    agrees(`${v}\n`);
    agrees(`${v}: x\n`);
  }
});

test('block literals, multi-line scalars, comments, documents and indentation', () => {
  const texts = [
    'a: |\n  one\n\n  two\n\n\nb: 1\n',
    'a: |-\n    deeper\n  less\n',
    'a: |-\n\n  after an empty line\n',
    'a: |+\n  kept\n\n',
    'a: >\n  folded\n  text\n',
    'a: |2\n   explicit\n',
    'a: |\n  no line break at the end',
    'a: plain\n  continued\n\n  after empty\nb: 2\n',
    'a: plain\n  # comment\n  more\n',
    'a: "quoted\n  continued \\\n  escaped"\n',
    "a: 'single\n\n\n  empty lines'\n",
    'a:\n- x\n- y\nb:\n  - z\n',
    'a:\n  b:\n    c: 1\n  d: 2\ne: 3\n',
    '- a: 1\n  b: 2\n-   c: 3\n    d: 4\n- - x\n',
    '-\n  a: 1\n- \n',
    'a: 1\n a: 2\n',
    'a: 1\na: 2\n',
    '---\n---\na: 1\n...\n',
    '%YAML 1.2\n---\na: 1\n',
    'a: &x 1\nb: *x\n',
    'a:\tb\n',
    'a: b\r\n',
    '? a\n: b\n',
    '"quoted key": 1\n\'single key\': 2\n',
    'a: 1 # trailing\nb: # comment\n  c: 2\n',
    '  indented: root\n  next: 1\n',
    'a: [1, 2]\n',
    'a: x\n    y: z\n',
    '__proto__: 1\n',
    '<<: {a: 1}\n',
  ];
  for (const t of texts) agrees(t);
});

test('generated and mutated documents: read as the library reads them, or left to it', () => {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
  const words = ['a', 'foo bar', 'true', 'null', '~', '12', '-3', '0x1F', '1.5', '1e3', '-', '- x', 'a: b', 'a #b', '#x', "it's", 'say "hi"', 'x\\y', '', ' lead', 'trail ', 'two\nlines', 'gap\n\nhere', 'end\n', '@x', '[a]', '{a}', 'a,b', '*x', '&x', '!x', '|x', '>x', 'http://x:80/a', 'long text '.repeat(10), 'x:', ':x', '...', '---', 'é ü'];
  const value = (d: number): unknown => {
    const r = rnd();
    if (d > 3 || r < 0.45) {
      const s = rnd();
      return s < 0.6 ? pick(words) : s < 0.75 ? Math.floor(rnd() * 1e6) - 5e5 : s < 0.85 ? rnd() * 100 : s < 0.95 ? rnd() < 0.5 : null;
    }
    if (r < 0.7) return Array.from({ length: Math.floor(rnd() * 4) }, () => value(d + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 5) }, () => [pick(words) + pick(['', 'k']), value(d + 1)]));
  };
  const styles = [{}, { lineWidth: 20, minContentWidth: 0 }, { defaultStringType: 'QUOTE_DOUBLE' }, { defaultStringType: 'QUOTE_SINGLE' }, { defaultStringType: 'BLOCK_LITERAL' }, { indentSeq: false }, { indent: 4 }] as const;
  let read = 0;
  for (let i = 0; i < 1500; i++) {
    const text = yaml().stringify(value(0), pick(styles));
    if (parseBlockYaml(text) !== undefined) read++;
    agrees(text);
  }
  // Most of them are of the subset: the comparison compared.
  assert.ok(read > 700, `read ${read}`);
  const base = CRD.split('---\n# a second')[0]!.split('\n');
  for (let i = 0; i < 1500; i++) {
    const lines = [...base];
    const li = Math.floor(rnd() * lines.length);
    const l = lines[li]!;
    const pos = Math.floor(rnd() * (l.length + 1));
    const r = rnd();
    if (r < 0.4) lines[li] = l.slice(0, pos) + pick([' ', ':', '#', '-', "'", '"', '|', ': ', ' #', '- ', '\\', '  ', '|-', '[', '{', '&a', '*a', '!t', "''", 'true']) + l.slice(pos);
    else if (r < 0.6) lines[li] = l.slice(0, pos) + l.slice(pos + 1);
    else if (r < 0.8) lines[li] = rnd() < 0.5 ? ` ${l}` : l.slice(1);
    else lines.splice(li, 0, pick(['', ' ', '#c', '  - x', '---', 'x: y', '  |', "  'a", '"b']));
    agrees(lines.join('\n'));
  }
});
