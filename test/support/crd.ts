// A small CustomResourceDefinition of the tests' own, in the kubernetes profile: a Widget with a
// size, a colour from a list, a label with a pattern, a free-form part that keeps unknown fields
// and a map-type list of ports.

import assert from 'node:assert/strict';
import { api, waitFor } from './server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** The CRD's condition of `type`, if it has one. */
export const crdCondition = (crd: Body, type: string): Body | undefined => crd.status?.conditions?.find((c: Body) => c.type === type);

/** Creates the CRD (kubernetes profile) and waits until it is Established. */
export async function establishCrd(server: { url: string }, crd: Body): Promise<void> {
  const r = await api(server, 'POST', CRDS, crd);
  assert.equal(r.status, 201, r.text);
  await waitFor(`${crd.metadata.name} established`, async () => crdCondition((await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).body, 'Established')?.status === 'True');
}

/** The Widget CRD in `group`; options rename it, change its scope or drop its status subresource. */
export function widgetCrd(group: string, o: { scope?: string; plural?: string; kind?: string; shortNames?: string[]; categories?: string[]; status?: boolean } = {}): Body {
  const plural = o.plural ?? 'widgets';
  const kind = o.kind ?? 'Widget';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: o.scope ?? 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, shortNames: o.shortNames ?? ['wdg'], categories: o.categories ?? ['gadgets'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['size'],
                  properties: {
                    size: { type: 'integer', minimum: 1, maximum: 10 },
                    colour: { type: 'string', enum: ['red', 'green', 'blue'] },
                    label: { type: 'string', pattern: '^[a-z]+$', maxLength: 8 },
                    extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                    ports: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['name'],
                      items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, number: { type: 'integer' } } },
                    },
                  },
                },
                status: { type: 'object', properties: { ready: { type: 'boolean' } } },
              },
            },
          },
          ...(o.status === false ? {} : { subresources: { status: {} } }),
          additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }, { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
        },
      ],
    },
  };
}

