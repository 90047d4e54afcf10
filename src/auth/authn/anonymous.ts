// The anonymous authenticator: a request no other authenticator recognised is `system:anonymous`
// in `system:unauthenticated` (`--anonymous-auth`).

import { ALL_UNAUTHENTICATED, ANONYMOUS_USER, type Authenticator } from './authenticator.ts';

export const anonymous: Authenticator = {
  async authenticate() {
    return { kind: 'authenticated', user: { name: ANONYMOUS_USER, groups: [ALL_UNAUTHENTICATED] } };
  },
};
