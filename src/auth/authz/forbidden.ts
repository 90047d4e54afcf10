// The 403 of a denied check, worded as kube-apiserver words it (responsewriters.ForbiddenStatusError
// and apierrors.NewForbidden), for the request itself and for the checks made on its behalf.

import { StatusError } from '../../machinery/status.ts';
import type { RequestInfo } from '../../request/request-info.ts';
import { goQuote } from '../../ssa/value.ts';

/** Text that could read as HTML is escaped, as kube-apiserver escapes its part of the message. */
const sanitize = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** `User "jane" cannot list resource "pods" in API group "" in the namespace "default"`. */
function forbiddenMessage(username: string, i: RequestInfo): string {
  const who = `User ${goQuote(username)} cannot ${i.verb}`;
  if (!i.isResourceRequest) return `${who} path ${goQuote(i.path)}`;
  const resource = i.subresource ? `${i.resource}/${i.subresource}` : i.resource;
  const where = i.namespace ? `in the namespace ${goQuote(i.namespace)}` : 'at the cluster scope';
  return `${who} resource ${goQuote(resource)} in API group ${goQuote(i.apiGroup)} ${where}`;
}

/** The Forbidden Status of `username` denied `i`, with the authorizer's reason when it gave one. */
export function forbidden(username: string, i: RequestInfo, reason?: string): StatusError {
  const why = sanitize(forbiddenMessage(username, i)) + (reason ? `: ${reason}` : '');
  const qualified = i.apiGroup ? `${i.resource}.${i.apiGroup}` : i.resource;
  const message = !i.resource && !i.apiGroup ? `forbidden: ${why}` : i.name ? `${qualified} ${goQuote(i.name)} is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
  return new StatusError(403, 'Forbidden', message, { name: i.name || undefined, group: i.apiGroup || undefined, kind: i.resource || undefined });
}
