// What the fields of ConfigMap, Secret and ServiceAccount mean, as `kubectl explain` and OpenAPI
// show them.

import type { Naming } from '../../../naming.ts';
import type { ObjectDocs } from '../../schemas.ts';
import { objectReferenceDocs } from './event.ts';

const KEY_RULE = "Each key consists of letters, digits, '-', '_' or '.' (at most 253 characters, not '.' or '..' and not starting with '..').";

export const configMapDocs: ObjectDocs = {
  about: 'Configuration data for programs to read: named text values and named binary values, together at most 1 MiB.',
  fields: {
    immutable: 'When true, data and binaryData can no longer change, and neither can this field: the object can only be deleted and re-created. Unset means mutable.',
    data: `Text values by key. ${KEY_RULE} Values that are not UTF-8 belong in binaryData; a key may not be in both.`,
    binaryData: `Binary values by key, base64 in JSON and YAML, raw bytes in protobuf and CBOR. ${KEY_RULE} A key may not also be in data.`,
  },
};

export const secretDocs = (n: Naming): ObjectDocs => ({
  about: 'Sensitive values, such as passwords, tokens and keys, kept apart from the objects that use them. Together at most 1 MiB.',
  fields: {
    immutable: 'When true, data can no longer change, and neither can this field: the object can only be deleted and re-created. Unset means mutable.',
    data: `The secret values by key, base64 in JSON and YAML, raw bytes in protobuf and CBOR. ${KEY_RULE}`,
    stringData: 'Write-only text values by key, for convenience: on every write they are merged into data (replacing a value of the same key there) and are never stored or returned.',
    type:
      `What the values are, for programs to handle them: Opaque (the default, any keys), ${n.labelDomain}/service-account-token, ${n.labelDomain}/dockercfg, ` +
      `${n.labelDomain}/dockerconfigjson, ${n.labelDomain}/basic-auth, ${n.labelDomain}/ssh-auth, ${n.labelDomain}/tls or bootstrap.${n.labelDomain}/token, ` +
      'each requiring its own keys; any other value is accepted as is. Cannot be changed.',
  },
});

export const serviceAccountDocs: ObjectDocs = {
  about: 'An identity for processes that call the API: requests authenticated as this account have the user name system:serviceaccount:<namespace>:<name>.',
  fields: {
    secrets: objectReferenceDocs(
      'Secrets of this namespace that pods running as this account may use; a reference keeps only its name. Not a way to find token secrets: request tokens through the token subresource instead.',
    ),
    imagePullSecrets: {
      about: 'Secrets of this namespace holding registry credentials, used to pull the images of pods running as this account.',
      typeAbout: 'A reference to an object of the same namespace, by name.',
      fields: { name: 'The name of the object.' },
    },
    automountServiceAccountToken: 'Whether pods running as this account get an API token mounted automatically; a pod may say otherwise.',
  },
};
