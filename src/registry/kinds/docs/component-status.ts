// What the fields of ComponentStatus mean, as `kubectl explain` and OpenAPI show them.

import type { ObjectDocs } from '../../schemas.ts';

export const componentStatusDocs: ObjectDocs = {
  about: 'Deprecated: the health of one component of the control plane (here, the storage backend), probed afresh on every read. Read-only: only get and list are served.',
  fields: {
    conditions: {
      about: 'The results of the health probe; the only type is Healthy.',
      typeAbout: 'The outcome of one health probe of a component.',
      fields: {
        type: 'What was probed; always Healthy.',
        status: 'True when the component answered healthy, False when not, Unknown when it could not be asked.',
        message: 'What the component reported when it was healthy.',
        error: 'What went wrong when the component was not healthy.',
      },
    },
  },
};
