// The authorization modes (`--authorization-mode`) and the chain they make: kube-apiserver's
// privileged-groups authorizer first (members of system:masters are always allowed), then each
// mode in the order given; the first that allows or denies decides, and when none has an opinion
// the request is refused with the reasons they gave.

import { NO_OPINION, type Attributes, type Authorizer, type Decision } from './authorizer.ts';
import { privilegedGroups } from './rbac.ts';

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Node', 'RBAC', 'Webhook'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

/**
 * The server's modes when none are given: secure by default, as real clusters are configured
 * (kube-apiserver's own default is AlwaysAllow).
 */
export const DEFAULT_AUTHORIZATION_MODES: readonly AuthorizationMode[] = ['Node', 'RBAC'];

/** Checks a mode list as the flag gives it: known modes, each once, at least one. */
export function parseAuthorizationModes(modes: readonly string[]): AuthorizationMode[] {
  if (!modes.length) throw new Error('--authorization-mode: at least one authorization mode must be passed');
  const seen = new Set<string>();
  for (const m of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(m)) throw new Error(`--authorization-mode: unknown authorization mode ${JSON.stringify(m)}: supported modes: ${AUTHORIZATION_MODES.join(', ')}`);
    if (seen.has(m)) throw new Error(`--authorization-mode: authorization mode ${m} is given more than once`);
    seen.add(m);
  }
  return modes as AuthorizationMode[];
}

/** kube-apiserver's checks of `--authorization-policy-file` against the modes. */
export function checkPolicyFile(modes: readonly AuthorizationMode[], policyFile: string | undefined): void {
  if (modes.includes('ABAC') && !policyFile) throw new Error("authorization-mode ABAC's authorization policy file not passed");
  if (policyFile && !modes.includes('ABAC')) throw new Error('cannot specify --authorization-policy-file without mode ABAC');
}

const EVERYTHING_FORBIDDEN: Decision = Object.freeze({ decision: 'no-opinion', reason: 'Everything is forbidden.' });

export const alwaysDeny: Authorizer = {
  // As kube-apiserver's: no opinion, with its reason, so a later mode may still allow.
  async authorize() {
    return EVERYTHING_FORBIDDEN;
  },
  known: () => EVERYTHING_FORBIDDEN,
};

/** kube's unionAuthzHandler: the first allow or deny decides; otherwise no opinion with every reason given. */
export function authorizerChain(authorizers: readonly Authorizer[]): Authorizer {
  return {
    async authorize(attrs: Attributes) {
      let reasons: string[] | undefined;
      for (const a of authorizers) {
        const d = a.known?.(attrs) ?? (await a.authorize(attrs));
        if (d.decision !== 'no-opinion') return d;
        if (d.reason) (reasons ??= []).push(d.reason);
      }
      return reasons ? { decision: 'no-opinion', reason: reasons.join('\n') } : NO_OPINION;
    },
    known(attrs: Attributes) {
      // The same, as long as each decision is reached at once (the privileged groups' allow first).
      let reasons: string[] | undefined;
      for (let i = 0; i < authorizers.length; i++) {
        const known = authorizers[i]!.known;
        const d = known && known(attrs);
        if (d === undefined) return undefined;
        if (d.decision !== 'no-opinion') return d;
        if (d.reason) (reasons ??= []).push(d.reason);
      }
      return reasons ? { decision: 'no-opinion', reason: reasons.join('\n') } : NO_OPINION;
    },
  };
}

/** The chain of `modes`, with the RBAC, Node, ABAC and webhook authorizers given when they are among them. */
export function modeChain(modes: readonly AuthorizationMode[], parts: { alwaysAllow: Authorizer; rbac?: Authorizer; node?: Authorizer; abac?: Authorizer; webhook?: Authorizer }): Authorizer {
  const each = modes.map((m): Authorizer => {
    if (m === 'AlwaysAllow') return parts.alwaysAllow;
    if (m === 'Webhook') {
      if (!parts.webhook) throw new Error("authorization-mode Webhook's authorization config file not passed");
      return parts.webhook;
    }
    if (m === 'AlwaysDeny') return alwaysDeny;
    if (m === 'ABAC') {
      if (!parts.abac) throw new Error("authorization-mode ABAC's authorization policy file not passed");
      return parts.abac;
    }
    if (m === 'Node') {
      if (!parts.node) throw new Error('Node mode without its authorizer');
      return parts.node;
    }
    if (!parts.rbac) throw new Error('RBAC mode without its authorizer');
    return parts.rbac;
  });
  return authorizerChain([privilegedGroups, ...each]);
}
