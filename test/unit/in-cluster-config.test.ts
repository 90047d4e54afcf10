// The in-cluster connection of an authorization webhook, as client-go's rest.InClusterConfig and
// its cached file token source behave: the address from KUBERNETES_SERVICE_HOST and _PORT (an IPv6
// host bracketed), the errors without them or without a token, the token read again once its read
// is older than the interval or after a 401, a failed or empty read keeping the last token, and a
// CA that cannot be read logged (the system's roots are then trusted).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inClusterClientConfig } from '../../src/auth/authz/config-file.ts';
import { tempDir } from '../support/tmp.ts';
import { makeCa } from '../support/certs.ts';

const ca = await makeCa('in-cluster-ca');
const env = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };

function podDir(token: string, caPem: string | null = ca.cert): string {
  const dir = tempDir('in-cluster');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'token'), token);
  if (caPem !== null) writeFileSync(join(dir, 'ca.crt'), caPem);
  return dir;
}

test('the address comes from the environment; an IPv6 host is bracketed', () => {
  const dir = podDir('t');
  assert.equal(inClusterClientConfig({ dir, env }).url.href, 'https://10.0.0.1/');
  assert.equal(inClusterClientConfig({ dir, env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' } }).url.href, 'https://[fd00::1]:6443/');
  const c = inClusterClientConfig({ dir, env });
  assert.equal(c.ca, ca.cert);
  assert.equal(c.insecureSkipTlsVerify, false);
});

test('without the service variables or the token file it is an error worded as client-go words it', () => {
  const dir = podDir('t');
  const notInCluster = { message: /^unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined$/ };
  assert.throws(() => inClusterClientConfig({ dir, env: {} }), notInCluster);
  assert.throws(() => inClusterClientConfig({ dir, env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' } }), notInCluster);
  assert.throws(() => inClusterClientConfig({ dir, env: { KUBERNETES_SERVICE_PORT: '443' } }), notInCluster);
  rmSync(join(dir, 'token'));
  assert.throws(() => inClusterClientConfig({ dir, env }), { message: `open ${join(dir, 'token')}: no such file or directory` });
});

test('the token is read again once its read is older than the interval; a failed or empty read keeps the last one', async () => {
  const dir = podDir('first\n');
  const logs: string[] = [];
  const c = inClusterClientConfig({ dir, env, tokenRereadMs: 40, log: (m) => logs.push(m) });
  assert.equal(c.token!(), 'first');
  writeFileSync(join(dir, 'token'), 'second');
  assert.equal(c.token!(), 'first', 'not before the interval');
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(c.token!(), 'second');
  writeFileSync(join(dir, 'token'), '  \n');
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(c.token!(), 'second');
  assert.match(logs.at(-1)!, /^Unable to rotate token: read empty token from file ".*token"$/);
  rmSync(join(dir, 'token'));
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(c.token!(), 'second');
  assert.match(logs.at(-1)!, /^Unable to rotate token: failed to read token file ".*token": open .*token: no such file or directory$/);
});

test('a 401 from the service makes the next call read the token again', () => {
  const dir = podDir('first');
  const c = inClusterClientConfig({ dir, env });
  assert.equal(c.token!(), 'first');
  writeFileSync(join(dir, 'token'), 'second');
  assert.equal(c.token!(), 'first', 'kept for about a minute');
  c.tokenRejected();
  assert.equal(c.token!(), 'second');
});

test('a CA that cannot be read or holds no certificate is logged and the system roots are trusted', () => {
  const logs: string[] = [];
  const missing = inClusterClientConfig({ dir: podDir('t', null), env, log: (m) => logs.push(m) });
  assert.equal(missing.ca, undefined);
  assert.match(logs[0]!, /^expected to load root CA config from .*ca\.crt, but got err: open .*ca\.crt: no such file or directory$/);
  const garbage = inClusterClientConfig({ dir: podDir('t', 'not a certificate'), env, log: (m) => logs.push(m) });
  assert.equal(garbage.ca, undefined);
  assert.match(logs[1]!, /but got err: data does not contain any valid RSA or ECDSA certificates$/);
});
