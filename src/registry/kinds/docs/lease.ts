// What the fields of Lease mean, as `kubectl explain` and OpenAPI show them.

import type { ObjectDocs } from '../../schemas.ts';

export const leaseDocs: ObjectDocs = {
  about: 'A lock held for a limited time, renewed by its holder: used for leader election among replicas of a component and for node heartbeats. A PUT of a missing lease creates it.',
  fields: {
    spec: {
      about: 'Who holds the lease, since when, and for how long.',
      typeAbout: 'The state of a lease: its holder and its timing.',
      fields: {
        holderIdentity: "The identity of the current holder, empty when the lease is free. Under coordinated leader election it is the elected LeaseCandidate's metadata.name.",
        leaseDurationSeconds: 'How many seconds after the last renewTime other candidates must wait before they may take the lease over. Must be greater than 0.',
        acquireTime: 'When the current holder acquired the lease, with microsecond precision.',
        renewTime: 'When the current holder last renewed the lease, with microsecond precision; the lease expires leaseDurationSeconds after it.',
        leaseTransitions: 'How many times the lease has changed holders. Must not be negative.',
        strategy:
          'How the holder is chosen under coordinated leader election, such as OldestEmulationVersion; unset means the lease is not coordinated. Can be set only while the CoordinatedLeaderElection feature gate is on.',
        preferredHolder: 'A hint to the current holder that it should give the lease up for this candidate. Can be set only together with strategy.',
      },
    },
  },
};
