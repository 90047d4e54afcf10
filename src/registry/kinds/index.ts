// The built-in kinds this server serves, in discovery order.

import type { Naming } from '../../naming.ts';
import type { KindDefinition } from '../definition.ts';
import { leaseDefinition } from './lease.ts';
import { namespaceDefinition } from './namespace.ts';
import { nodeDefinition } from './node.ts';

export function builtinKinds(naming: Naming): KindDefinition[] {
  return [namespaceDefinition(naming), nodeDefinition(), leaseDefinition(naming)];
}
