// A kubeconfig-format file for an outbound client: which context, cluster and user are used, the
// TLS settings and credentials they give, paths relative to the file, and client-go's errors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadKubeconfig, parseKubeconfig } from '../../src/auth/kubeconfig.ts';
import { tempDir } from '../support/tmp.ts';

const PEM = (what: string) => `-----BEGIN ${what}-----\nAAAA\n-----END ${what}-----\n`;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const dir = tempDir('kubeconfig');
mkdirSync(join(dir, 'pki'));
writeFileSync(join(dir, 'pki', 'ca.crt'), PEM('CERTIFICATE'));
writeFileSync(join(dir, 'pki', 'token'), 'file-token\n');

test('the current context picks the cluster and user; files are read relative to the kubeconfig', () => {
  const path = join(dir, 'config.yaml');
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
current-context: second
clusters:
- {name: one, cluster: {server: "https://one.example:8443/a"}}
- {name: two, cluster: {server: "https://two.example/review", certificate-authority: pki/ca.crt, tls-server-name: webhook.local}}
users:
- {name: u1, user: {token: t1}}
- {name: u2, user: {tokenFile: pki/token}}
contexts:
- {name: first, context: {cluster: one, user: u1}}
- {name: second, context: {cluster: two, user: u2}}
`,
  );
  const c = loadKubeconfig(path);
  assert.equal(c.url.href, 'https://two.example/review');
  assert.equal(c.ca, PEM('CERTIFICATE'));
  assert.equal(c.serverName, 'webhook.local');
  assert.equal(c.insecureSkipTlsVerify, false);
  assert.equal(c.token?.(), 'file-token');
  assert.equal(c.cert, undefined);
});

test('the only context, or with none the only cluster and user; inline data; JSON too', () => {
  const only = parseKubeconfig(
    `clusters: [{name: c, cluster: {server: "https://x", certificate-authority-data: ${b64(PEM('CERTIFICATE'))}}}]\n` +
      `users: [{name: u, user: {client-certificate-data: ${b64(PEM('CERTIFICATE'))}, client-key-data: ${b64(PEM('PRIVATE KEY'))}}}]\n` +
      'contexts: [{name: ctx, context: {cluster: c, user: u}}]\n',
    dir,
    'inline',
  );
  assert.equal(only.ca, PEM('CERTIFICATE'));
  assert.equal(only.cert, PEM('CERTIFICATE'));
  assert.equal(only.key, PEM('PRIVATE KEY'));
  const none = parseKubeconfig(JSON.stringify({ clusters: [{ cluster: { server: 'https://y', 'insecure-skip-tls-verify': true } }], users: [{ user: { token: 'abc' } }] }), dir, 'json');
  assert.equal(none.url.host, 'y');
  assert.equal(none.insecureSkipTlsVerify, true);
  assert.equal(none.token?.(), 'abc');
});

test("client-go's errors, one line each, naming the file", () => {
  const bad: [string, RegExp][] = [
    ['', /^invalid kubeconfig "f": no configuration has been provided$/],
    ['[1, 2]', /expected a Config object/],
    ['clusters: {a: 1}', /clusters must be a list/],
    ['clusters: [{name: c, cluster: {}}]', /no server found for cluster "c"/],
    ['clusters: [{name: c, cluster: {server: "ftp://x"}}]', /must be an http or https URL/],
    ['clusters: [{name: c, cluster: {server: "https://x"}}, {name: d, cluster: {server: "https://y"}}]', /no context, and more than one cluster/],
    ['current-context: nope\nclusters: [{name: c, cluster: {server: "https://x"}}]', /context was not found for specified context: nope/],
    [
      'contexts: [{name: a, context: {cluster: c}}, {name: b, context: {cluster: c}}]\nclusters: [{name: c, cluster: {server: "https://x"}}]',
      /current-context is not set and there are 2 contexts to choose from/,
    ],
    ['contexts: [{name: a, context: {cluster: gone}}]', /cluster "gone" was not found/],
    [`clusters: [{name: c, cluster: {server: "https://x", certificate-authority: a.crt, certificate-authority-data: ${b64(PEM('CERTIFICATE'))}}}]`, /certificate-authority-data and certificate-authority are both specified for c/],
    [`clusters: [{name: c, cluster: {server: "https://x", insecure-skip-tls-verify: true, certificate-authority: pki/ca.crt}}]`, /specifying a root certificates file with the insecure flag is not allowed/],
    ['clusters: [{name: c, cluster: {server: "https://x", certificate-authority: missing.crt}}]', /certificate-authority: ENOENT/],
    ['clusters: [{name: c, cluster: {server: "https://x", certificate-authority-data: bm90IHBlbQ==}}]', /certificate-authority-data: not base64 of PEM data/],
    ['clusters: [{name: c, cluster: {server: "https://x"}}]\nusers: [{name: u, user: {client-key-data: eA==}}]', /client-cert-data or client-cert must be specified for u/],
    ['clusters: [{name: c, cluster: {server: "https://x"}}]\nusers: [{name: u, user: {exec: {command: x}}}]', /exec and auth-provider credentials are not supported/],
    ['clusters: [{name: c, cluster: {server: "https://x"}}]\nusers: [{name: u, user: {tokenFile: nope}}]', /tokenFile: ENOENT/],
    ['clusters: [unclosed', /not YAML or JSON/],
  ];
  for (const [text, message] of bad) {
    assert.throws(
      () => parseKubeconfig(text, dir, 'f'),
      (e: Error) => {
        assert.match(e.message, message, text);
        assert.ok(!e.message.includes('\n'), e.message);
        return true;
      },
      text,
    );
  }
});
