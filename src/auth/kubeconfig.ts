// A kubeconfig-format file describing one outbound client, as the webhooks' configuration files
// are written (the token-review webhook now, the authorization webhook later): the context in use
// (`current-context`, or the only one), its cluster (`server`, the CA to trust or
// `insecure-skip-tls-verify`, `tls-server-name`) and its user (a client certificate and key, or a
// bearer token). Paths are relative to the file's directory. Every error is one line that names
// the file and what is wrong with it, as client-go's validation words it.

import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { yaml } from '../machinery/yaml.ts';
import type { OutboundClientConfig } from '../machinery/webhook-client.ts';

export type { OutboundClientConfig };

/** Reads and validates `path`. Throws an Error of one line when it cannot be used. */
export function loadKubeconfig(path: string): OutboundClientConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`unable to read kubeconfig ${JSON.stringify(path)}: ${(e as Error).message}`);
  }
  return parseKubeconfig(text, dirname(resolve(path)), path);
}

/** The client `text` describes; relative paths resolve against `baseDir`; `source` names the file in errors. */
export function parseKubeconfig(text: string, baseDir: string, source: string): OutboundClientConfig {
  const fail = (message: string): never => {
    throw new Error(`invalid kubeconfig ${JSON.stringify(source)}: ${message}`);
  };
  let doc: unknown;
  try {
    doc = yaml().parse(text, { prettyErrors: false });
  } catch (e) {
    fail(`not YAML or JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) fail('no configuration has been provided');
  if (!isObject(doc)) fail('expected a Config object');
  const config = doc as Record<string, unknown>;
  const clusters = namedList(config.clusters, 'clusters', 'cluster', fail);
  const users = namedList(config.users, 'users', 'user', fail);
  const contexts = namedList(config.contexts, 'contexts', 'context', fail);
  const current = str(config['current-context'], 'current-context', fail);

  // The context in use: the current one, or the only one; with no context at all, the only
  // cluster and the only user.
  let clusterName: string | undefined;
  let userName: string | undefined;
  if (current) {
    const ctx = contexts.get(current) ?? fail(`context was not found for specified context: ${current}`);
    clusterName = str(ctx.cluster, `context ${current}: cluster`, fail);
    userName = str(ctx.user, `context ${current}: user`, fail);
  } else if (contexts.size === 1) {
    const [name, ctx] = [...contexts][0]!;
    clusterName = str(ctx.cluster, `context ${name}: cluster`, fail);
    userName = str(ctx.user, `context ${name}: user`, fail);
  } else if (contexts.size > 1) {
    fail(`current-context is not set and there are ${contexts.size} contexts to choose from`);
  } else {
    if (clusters.size !== 1) fail(clusters.size ? 'no context, and more than one cluster' : 'no configuration has been provided: no cluster');
    clusterName = [...clusters.keys()][0]!;
    if (users.size > 1) fail('no context, and more than one user');
    userName = users.size ? [...users.keys()][0]! : undefined;
  }
  const cluster = (clusterName !== undefined ? clusters.get(clusterName) : undefined) ?? fail(`cluster ${JSON.stringify(clusterName ?? '')} was not found`);
  // A context without a user, or no user at all: no credential.
  const user = userName ? (users.get(userName) ?? fail(`user ${JSON.stringify(userName)} was not found`)) : userName === '' ? (users.get('') ?? {}) : {};

  const server = str(cluster.server, `cluster ${clusterName}: server`, fail);
  if (!server) fail(`no server found for cluster ${JSON.stringify(clusterName)}`);
  let url: URL;
  try {
    url = new URL(server!);
  } catch {
    return fail(`cluster ${clusterName}: server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`cluster ${clusterName}: server ${JSON.stringify(server)} must be an http or https URL`);

  const insecure = cluster['insecure-skip-tls-verify'];
  if (insecure !== undefined && typeof insecure !== 'boolean') fail(`cluster ${clusterName}: insecure-skip-tls-verify must be a boolean`);
  const caFile = str(cluster['certificate-authority'], `cluster ${clusterName}: certificate-authority`, fail);
  const caData = str(cluster['certificate-authority-data'], `cluster ${clusterName}: certificate-authority-data`, fail);
  if (caFile && caData) fail(`certificate-authority-data and certificate-authority are both specified for ${clusterName}. certificate-authority-data will override.`);
  if (insecure && (caFile || caData)) fail(`cluster ${clusterName}: specifying a root certificates file with the insecure flag is not allowed`);
  const serverName = str(cluster['tls-server-name'], `cluster ${clusterName}: tls-server-name`, fail);

  const who = `user ${userName ?? ''}`;
  const certFile = str(user['client-certificate'], `${who}: client-certificate`, fail);
  const certData = str(user['client-certificate-data'], `${who}: client-certificate-data`, fail);
  const keyFile = str(user['client-key'], `${who}: client-key`, fail);
  const keyData = str(user['client-key-data'], `${who}: client-key-data`, fail);
  if (certFile && certData) fail(`client-cert-data and client-cert are both specified for ${userName}. client-cert-data will override.`);
  if (keyFile && keyData) fail(`client-key-data and client-key are both specified for ${userName}; please specify only one`);
  const hasCert = Boolean(certFile || certData);
  const hasKey = Boolean(keyFile || keyData);
  if (hasCert && !hasKey) fail(`client-key-data or client-key must be specified for ${userName} to use the clientCert authentication method.`);
  if (hasKey && !hasCert) fail(`client-cert-data or client-cert must be specified for ${userName} to use the clientCert authentication method.`);
  const tokenValue = str(user.token, `${who}: token`, fail);
  const tokenFile = str(user.tokenFile, `${who}: tokenFile`, fail);
  if (user.exec !== undefined || user['auth-provider'] !== undefined) fail(`${who}: exec and auth-provider credentials are not supported for this client`);

  const at = (p: string) => (isAbsolute(p) ? p : resolve(baseDir, p));
  const read = (p: string, field: string) => {
    try {
      return readFileSync(at(p), 'utf8');
    } catch (e) {
      return fail(`${field}: ${(e as Error).message}`);
    }
  };
  const decode = (b64: string, field: string) => {
    const out = Buffer.from(b64, 'base64').toString('utf8');
    if (!out.includes('-----BEGIN')) fail(`${field}: not base64 of PEM data`);
    return out;
  };

  const out: OutboundClientConfig = { url, insecureSkipTlsVerify: insecure === true };
  if (caData) out.ca = decode(caData, `cluster ${clusterName}: certificate-authority-data`);
  else if (caFile) out.ca = read(caFile, `cluster ${clusterName}: certificate-authority`);
  if (serverName) out.serverName = serverName;
  if (hasCert) {
    out.cert = certData ? decode(certData, `${who}: client-certificate-data`) : read(certFile!, `${who}: client-certificate`);
    out.key = keyData ? decode(keyData, `${who}: client-key-data`) : read(keyFile!, `${who}: client-key`);
  }
  if (tokenValue) out.token = () => tokenValue;
  else if (tokenFile) out.token = fileToken(at(tokenFile), (m) => fail(`${who}: tokenFile: ${m}`));
  return out;
}

/**
 * A token file's content, read at start (where an unreadable file is an error) and again at most
 * once a minute, as client-go re-reads it; a later read that fails keeps the last token.
 */
function fileToken(path: string, fail: (message: string) => never): () => string | undefined {
  const readToken = () => readFileSync(path, 'utf8').trim();
  let token: string;
  try {
    token = readToken();
  } catch (e) {
    return fail((e as Error).message);
  }
  let readAt = Date.now();
  return () => {
    if (Date.now() - readAt >= 60_000) {
      readAt = Date.now();
      try {
        token = readToken();
      } catch {
        /* keep the last token */
      }
    }
    return token || undefined;
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string field, or undefined when absent (null counts as absent, as in Go). */
function str(v: unknown, what: string, fail: (message: string) => never): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') fail(`${what} must be a string`);
  return v as string;
}

/** `clusters`, `users` or `contexts`: a list of `{name, <field>: {…}}`, by name. */
function namedList(v: unknown, list: string, field: string, fail: (message: string) => never): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  if (v === undefined || v === null) return out;
  if (!Array.isArray(v)) fail(`${list} must be a list`);
  for (const [i, entry] of (v as unknown[]).entries()) {
    if (!isObject(entry)) fail(`${list}[${i}] must be an object`);
    const name = entry.name ?? '';
    if (typeof name !== 'string') fail(`${list}[${i}].name must be a string`);
    const body = entry[field] ?? {};
    if (!isObject(body)) fail(`${list}[${i}].${field} must be an object`);
    if (out.has(name as string)) fail(`${list}: ${JSON.stringify(name)} appears twice`);
    out.set(name as string, body as Record<string, unknown>);
  }
  return out;
}
