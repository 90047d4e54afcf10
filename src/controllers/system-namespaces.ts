// The namespaces that exist on every cluster: `default` and the system, public and node-lease
// namespaces of the naming profile. Created at start when missing.

import type { Naming } from '../naming.ts';
import { isStatusError } from '../machinery/status.ts';
import type { RegistryStore } from '../registry/store.ts';

function systemNamespaceNames(naming: Naming): string[] {
  return ['default', naming.systemNamespace, naming.publicNamespace, naming.nodeLeaseNamespace];
}

export async function ensureSystemNamespaces(namespaces: RegistryStore, naming: Naming): Promise<void> {
  await Promise.all(
    systemNamespaceNames(naming).map(async (name) => {
      try {
        await namespaces.create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { dryRun: false });
      } catch (e) {
        // Another API server on the same store may have created it first.
        if (!(isStatusError(e) && e.code === 409)) throw e;
      }
    }),
  );
}
