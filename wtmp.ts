import { readYamlFast } from './src/machinery/yaml-read.ts';
import { validateAgainstSchema } from './src/machinery/schema-validate.ts';
import { leaseDefinition } from './src/registry/kinds/lease.ts';
import { namingProfile } from './src/naming.ts';
import { parseFeatureGates } from './src/machinery/feature-gates.ts';
const def = leaseDefinition(namingProfile(), parseFeatureGates(''));
const yamlText = (n: number) => { let s = 'apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata:\n  name: x\nspec:\n  holderIdentity: h\n'; const parts=[s]; for (let i=0;i<n;i++) parts.push(`u${i}: 1\n`); return parts.join(''); };
const jsonText = (n: number) => { const o: Record<string, unknown> = { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'x' }, spec: { holderIdentity: 'h' } }; for (let i=0;i<n;i++) o[`u${i}`]=1; return JSON.stringify(o); };
for (const n of [60000, 180000]) for (const kind of ['yaml', 'json']) {
  let best = Infinity;
  for (let r = 0; r < 4; r++) {
    const v = kind === 'yaml' ? readYamlFast(yamlText(n), { scalars: '1.1', multi: false, duplicates: true, maxDepth: 1000, aliasErrors: true })!.documents[0] : JSON.parse(jsonText(n));
    const t = performance.now(); const res = validateAgainstSchema(v, def.schema); best = Math.min(best, performance.now() - t);
    if (r === 0 && n === 60000) console.log(kind, 'unknown', res.unknownFields.length);
  }
  console.log(kind, n, best.toFixed(1), 'ms');
}
