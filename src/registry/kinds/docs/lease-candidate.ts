// What the fields of LeaseCandidate mean, as `kubectl explain` and OpenAPI show them.

import type { ObjectDocs } from '../../schemas.ts';

export const leaseCandidateDocs: ObjectDocs = {
  about:
    "A component's bid to hold a Lease under coordinated leader election. The server pings candidates through spec.pingTime and live ones answer by renewing; candidates left unrenewed for hours are removed.",
  fields: {
    spec: {
      about: 'Which lease the candidate contends for, the versions it runs and the election strategy it supports.',
      typeAbout: 'A candidacy: the lease contended for, the versions offered and the strategy supported.',
      fields: {
        leaseName: 'The name of the Lease, in the same namespace, that this candidate contends for. Several candidates may name the same lease. Required; cannot be changed.',
        pingTime: 'When the server last asked the candidate to renew, with microsecond precision; set only during an election.',
        renewTime: 'When the candidate last renewed this object, with microsecond precision. A candidate answers a newer pingTime by updating it.',
        binaryVersion: 'The semantic version (without a leading v) of the binary the candidate runs. Required.',
        emulationVersion:
          'The semantic version (without a leading v) whose behaviour the candidate emulates; at most binaryVersion. Required when strategy is OldestEmulationVersion.',
        strategy:
          'The election strategy the candidate supports: OldestEmulationVersion or a domain-qualified name. When candidates disagree, the one with the newest binaryVersion decides. Required.',
      },
    },
  },
};
