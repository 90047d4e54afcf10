// OpenID Connect ID tokens against a real issuer over HTTPS on loopback (discovery and key set
// served by node:https, keys from jose, its certificate made here): the `--oidc-*` flags and the
// AuthenticationConfiguration file (claim and user validation rules, expression mappings,
// anonymous conditions, reload on change). Every rejected token is a 401 Status that changes
// nothing.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { api, testServer, waitFor } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { kubeConfigFor, loadClientNode } from '../support/client-node.ts';
import { issueCert, makeCa } from '../support/certs.ts';
import { startServerProcess } from '../support/server-process.ts';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/server.ts';
import { parseArgs } from '../../src/server/cli.ts';
import { recordingAuthorizer, withToken } from '../support/identity.ts';

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };
const dir = tempDir('authn-oidc');

// ---------------------------------------------------------------------------------------------
// The issuer: discovery and a key set over HTTPS, counting key set fetches.

type Alg = 'RS256' | 'ES256' | 'PS256';
type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
interface SigningKey {
  kid: string;
  alg: Alg;
  privateKey: PrivateKey;
  jwk: JWK;
}

async function newKey(kid: string, alg: Alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, use: 'sig' } };
}

interface Issuer {
  url: string;
  ca: string;
  caFile: string;
  keys: SigningKey[];
  jwksFetches: number;
  discoveries: number;
  server: Server;
  sign(claims: Record<string, unknown>, o?: { key?: SigningKey; alg?: string }): Promise<string>;
}

const issuerCa = await makeCa('oidc-test-ca');

async function startIssuer(path = ''): Promise<Issuer> {
  const serving = await issueCert(issuerCa, { subject: 'CN=127.0.0.1', usage: 'server', hosts: [{ type: 'ip', value: '127.0.0.1' }] });
  const issuer: Issuer = {
    url: '',
    ca: issuerCa.cert,
    caFile: join(dir, 'issuer-ca.crt'),
    keys: [await newKey('key-1')],
    jwksFetches: 0,
    discoveries: 0,
    server: createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url === `${path}/.well-known/openid-configuration`) {
        issuer.discoveries++;
        return res.end(JSON.stringify({ issuer: issuer.url, jwks_uri: `${issuer.url}/keys`, id_token_signing_alg_values_supported: ['RS256', 'ES256'] }));
      }
      if (req.url === `${path}/keys`) {
        issuer.jwksFetches++;
        return res.end(JSON.stringify({ keys: issuer.keys.map((k) => k.jwk) }));
      }
      res.statusCode = 404;
      res.end('{}');
    }),
    async sign(claims, o = {}) {
      const key = o.key ?? issuer.keys[0]!;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer.url, aud: 'orch', exp: now + 600, iat: now, ...claims })
        .setProtectedHeader({ alg: o.alg ?? key.alg, kid: key.kid, typ: 'JWT' })
        .sign(key.privateKey);
    },
  };
  writeFileSync(issuer.caFile, issuerCa.cert);
  await new Promise<void>((r) => issuer.server.listen(0, '127.0.0.1', r));
  // The issuers never keep the test process alive after its last test.
  issuer.server.unref();
  const { port } = issuer.server.address() as { port: number };
  issuer.url = `https://127.0.0.1:${port}${path}`;
  return issuer;
}

const namespace = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

async function metric(server: RunningServer, line: RegExp): Promise<number> {
  const text = (await api(server, 'GET', '/metrics')).text;
  const m = text.split('\n').find((l) => line.test(l));
  return m ? Number(m.split(' ').at(-1)) : 0;
}

// ---------------------------------------------------------------------------------------------
// Flag mode.

/** The least time between two key set fetches of these servers (10 s by default). */
const KEY_REFRESH_MS = 1000;

const issuer = await startIssuer();
const flagsAuthz = recordingAuthorizer();
const flagLogs: string[] = [];
const flags = await testServer({
  authentication: {
    oidc: { issuerUrl: issuer.url, clientId: 'orch', caFile: issuer.caFile, groupsClaim: 'groups', groupsPrefix: 'oidc:', requiredClaims: { tier: 'gold' }, signingAlgs: ['RS256', 'ES256'] },
    jwtKeyRefreshIntervalMs: KEY_REFRESH_MS,
  },
  authorizer: flagsAuthz,
  log: (m) => flagLogs.push(m),
});
const good = (claims: Record<string, unknown> = {}) => issuer.sign({ sub: 'alice', tier: 'gold', groups: ['dev', 'ops'], ...claims });

describe('--oidc-* flags', () => {
  test('an ID token authenticates: username <issuer>#sub, prefixed groups, system:authenticated, the token id as credential', async () => {
    await waitFor('issuer discovery', async () => (await withToken(flags, 'GET', '/api/v1/namespaces/ready-check', await good())).status === 404);
    const r = await withToken(flags, 'GET', '/api/v1/namespaces/who', await good({ jti: 'id-1' }));
    assert.equal(r.status, 404);
    assert.deepEqual(flagsAuthz.seen.get('/api/v1/namespaces/who'), {
      name: `${issuer.url}#alice`,
      groups: ['oidc:dev', 'oidc:ops', 'system:authenticated'],
      extra: { 'authentication.orch.io/credential-id': ['JTI=id-1'] },
    });
    // A single string is one group; an audience list holding the client id is accepted.
    await withToken(flags, 'GET', '/api/v1/namespaces/one-group', await good({ groups: 'admins', aud: ['other', 'orch'] }));
    assert.deepEqual(flagsAuthz.seen.get('/api/v1/namespaces/one-group')?.groups, ['oidc:admins', 'system:authenticated']);
    // ES256 is among --oidc-signing-algs.
    const ec = await newKey('ec-1', 'ES256');
    issuer.keys.push(ec);
    await waitFor('the EC key', async () => (await withToken(flags, 'GET', '/api/v1/namespaces/ec', await good({ sub: 'eve' }).then(() => issuer.sign({ sub: 'eve', tier: 'gold' }, { key: ec })))).status === 404);
    assert.equal(flagsAuthz.seen.get('/api/v1/namespaces/ec')?.name, `${issuer.url}#eve`);
  });

  test('a repeated token is verified once: one signature check, the key set fetched once', async () => {
    const token = await good({ sub: 'repeat' });
    const fetchesBefore = await metric(flags, /^authentication_token_cache_fetch_total\{status="ok"\}/);
    const hitsBefore = await metric(flags, /^authentication_token_cache_request_total\{status="hit"\}/);
    const jwksBefore = issuer.jwksFetches;
    for (let i = 0; i < 5; i++) assert.equal((await withToken(flags, 'GET', `/api/v1/namespaces/repeat-${i}`, token)).status, 404);
    assert.equal((await metric(flags, /^authentication_token_cache_fetch_total\{status="ok"\}/)) - fetchesBefore, 1, 'verified once');
    assert.equal((await metric(flags, /^authentication_token_cache_request_total\{status="hit"\}/)) - hitsBefore, 4, 'then taken from the cache');
    assert.equal(issuer.jwksFetches, jwksBefore, 'the known key needed no fetch');
  });

  test('kubectl --token and client-node with a token', async () => {
    const caFile = join(dir, 'server-ca.crt');
    writeFileSync(caFile, flags.ca!);
    const token = await good({ sub: 'kubectl-user' });
    const k = kubectlFor(flags, { label: 'kubectl-oidc', anonymous: true });
    assert.equal((await k.ok(['--certificate-authority', caFile, '--token', token, 'get', 'ns', 'default', '-o', 'name'])).trim(), 'namespace/default');
    assert.equal(flagsAuthz.seen.get('/api/v1/namespaces/default')?.name, `${issuer.url}#kubectl-user`);
    const bad = await k.fails(['--certificate-authority', caFile, '--token', await good({ exp: Math.floor(Date.now() / 1000) - 10 }), 'get', 'ns', 'default']);
    assert.match(bad.stderr, /Unauthorized/);

    const k8s = await loadClientNode();
    const kc = kubeConfigFor(k8s, flags.url);
    const cluster = kc.getCurrentCluster()!;
    kc.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'token-user', token: await good({ sub: 'client-node-user' }) }],
      contexts: [{ name: 't', cluster: cluster.name, user: 'token-user' }],
      currentContext: 't',
    });
    const ns = await kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'default' });
    assert.equal(ns.metadata?.name, 'default');
    assert.equal(flagsAuthz.seen.get('/api/v1/namespaces/default')?.name, `${issuer.url}#client-node-user`);
  });

  test('key rotation: a token of a new key is accepted once the key set is fetched again', async () => {
    const rotated = await newKey('key-2');
    issuer.keys = [rotated, ...issuer.keys.slice(1)];
    const before = issuer.jwksFetches;
    // The key set is fetched again at most every KEY_REFRESH_MS (10 s by default): the new key is
    // accepted within a few of those.
    const started = Date.now();
    await waitFor('the rotated key', async () => (await withToken(flags, 'GET', '/api/v1/namespaces/rotated', await issuer.sign({ sub: 'rot', tier: 'gold' }, { key: rotated }))).status === 404);
    assert.ok(Date.now() - started < 10 * KEY_REFRESH_MS);
    assert.ok(issuer.jwksFetches > before);
    assert.equal(flagsAuthz.seen.get('/api/v1/namespaces/rotated')?.name, `${issuer.url}#rot`);
  });

  test('every invalid token is 401 with a Status and creates nothing', async () => {
    const now = Math.floor(Date.now() / 1000);
    const stranger = await newKey('unknown-kid');
    const other = await newKey(issuer.keys[0]!.kid);
    const ps = await newKey('ps-1', 'PS256');
    issuer.keys.push(ps);
    const cases: [string, string][] = [
      ['expired', await good({ exp: now - 5 })],
      ['not yet valid', await good({ nbf: now + 3600 })],
      ['wrong audience', await good({ aud: 'someone-else' })],
      ['no expiry', await good({ exp: undefined })],
      ['unknown key', await issuer.sign({ sub: 'x', tier: 'gold' }, { key: stranger })],
      ['bad signature (a known kid, another key)', await issuer.sign({ sub: 'x', tier: 'gold' }, { key: other })],
      ['disallowed algorithm (PS256 not in --oidc-signing-algs)', await issuer.sign({ sub: 'x', tier: 'gold' }, { key: ps })],
      ['missing required claim', await issuer.sign({ sub: 'x', groups: [] })],
      ['required claim with another value', await good({ tier: 'silver' })],
      ['no username claim', await good({ sub: undefined })],
      ['groups of the wrong type', await good({ groups: 7 })],
      ['tampered payload', (await good()).replace(/\.([^.]+)\./, (_m, p: string) => `.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: 'root' })).toString('base64url')}.`)],
    ];
    for (const [what, token] of cases) {
      const r = await withToken(flags, 'POST', '/api/v1/namespaces', token, namespace('by-bad-oidc-token'));
      assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED], what);
    }
    // Another issuer's token is nobody's: the bearer token is still invalid.
    const otherIssuer = await startIssuer();
    const foreign = await otherIssuer.sign({ sub: 'x', tier: 'gold' });
    assert.deepEqual((await withToken(flags, 'POST', '/api/v1/namespaces', foreign, namespace('by-bad-oidc-token'))).status, 401);
    otherIssuer.server.close();
    assert.equal((await api(flags, 'GET', '/api/v1/namespaces/by-bad-oidc-token')).status, 404, 'nothing was created');
    assert.ok(flagLogs.some((l) => /oidc: verify token: oidc: token is expired/.test(l)), flagLogs.join('\n'));
    assert.ok(flagLogs.some((l) => /required claim tier not present/.test(l)));
    assert.ok(!flagLogs.some((l) => l.includes(cases[0]![1])), 'tokens are never logged');
  });

  test('username claim email: email_verified false is refused; prefix "-" and email take no issuer prefix', async () => {
    const authz = recordingAuthorizer();
    const s = await testServer({ authentication: { oidc: { issuerUrl: issuer.url, clientId: 'orch', caFile: issuer.caFile, usernameClaim: 'email' } }, authorizer: authz });
    const sign = (c: Record<string, unknown>) => issuer.sign(c, { key: issuer.keys[0] });
    await waitFor('discovery', async () => (await withToken(s, 'GET', '/api/v1/namespaces/e1', await sign({ email: 'a@example.com', email_verified: true }))).status === 404);
    assert.equal(authz.seen.get('/api/v1/namespaces/e1')?.name, 'a@example.com');
    assert.equal((await withToken(s, 'GET', '/api/v1/namespaces/e2', await sign({ email: 'b@example.com' }))).status, 404, 'email_verified may be absent');
    assert.deepEqual((await withToken(s, 'POST', '/api/v1/namespaces', await sign({ email: 'c@example.com', email_verified: false }), namespace('unverified'))).status, 401);
    const none = await testServer({ authentication: { oidc: { issuerUrl: issuer.url, clientId: 'orch', caFile: issuer.caFile, usernamePrefix: '-' } }, authorizer: authz });
    await waitFor('discovery', async () => (await withToken(none, 'GET', '/api/v1/namespaces/n1', await sign({ sub: 'plain' }))).status === 404);
    assert.equal(authz.seen.get('/api/v1/namespaces/n1')?.name, 'plain');
    assert.equal((await withToken(none, 'GET', '/api/v1/namespaces/n2', await sign({ sub: '' }))).status, 401, 'an empty username');
  });

  test('an issuer unreachable at start does not stop the server; its tokens are refused until discovery succeeds', async () => {
    const late = await startIssuer();
    const url = late.url;
    await new Promise((r) => late.server.close(r));
    const logs: string[] = [];
    const s = await testServer({ authentication: { oidc: { issuerUrl: url, clientId: 'orch', caFile: issuer.caFile } }, authorizer: recordingAuthorizer(), log: (m) => logs.push(m) });
    assert.equal((await api(s, 'GET', '/api/v1/namespaces/default')).status, 200, 'the server serves');
    assert.equal((await withToken(s, 'GET', '/api/v1/namespaces/default', await late.sign({ sub: 'x' }))).status, 401);
    await waitFor('the failure logged', () => logs.some((l) => /oidc authenticator: initializing plugin/.test(l)));
    assert.ok(logs.some((l) => /oidc: authenticator not initialized/.test(l)));
  });

  test('start-up errors of one line', async () => {
    const fails = async (o: ServerOptions['authentication'], message: string | RegExp) => {
      await assert.rejects(startServer({ authentication: o }), (e: Error) => {
        assert.ok(typeof message === 'string' ? e.message === message : message.test(e.message), e.message);
        assert.ok(!e.message.includes('\n'), e.message);
        return true;
      });
    };
    await fails({ oidc: { issuerUrl: 'http://127.0.0.1:1', clientId: 'orch' } }, 'invalid authentication configuration: jwt[0].issuer.url: Invalid value: "http://127.0.0.1:1": URL scheme must be https');
    await fails({ oidc: { issuerUrl: issuer.url } }, 'oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
    await fails({ oidc: { groupsClaim: 'groups' } }, 'oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
    await fails({ oidc: { issuerUrl: issuer.url, clientId: 'orch', signingAlgs: ['HS256'] } }, 'oidc: unsupported signing alg: "HS256"');
    await fails({ oidc: { issuerUrl: issuer.url, clientId: 'orch', caFile: join(dir, 'missing.crt') } }, /^--oidc-ca-file: ENOENT/);
  });
});

describe('the command line', () => {
  test('--oidc-* flags: repeated --oidc-required-claim, the email claim, groups with a prefix', async () => {
    const p = await startServerProcess([
      `--data-dir=${tempDir('oidc-cli')}`,
      `--oidc-issuer-url=${issuer.url}`,
      '--oidc-client-id=orch',
      `--oidc-ca-file=${issuer.caFile}`,
      '--oidc-username-claim=email',
      '--oidc-groups-claim=groups',
      '--oidc-groups-prefix=g:',
      '--oidc-required-claim=tier=gold',
      '--oidc-required-claim=team=a=b',
      // What is tested is authentication: every authenticated user is allowed.
      '--authorization-mode=AlwaysAllow',
    ]);
    try {
      const server = { url: p.url, ca: (await import('../support/tls-clients.ts')).tlsFor(p.url)!.ca } as RunningServer;
      const token = (c: Record<string, unknown>) => issuer.sign({ email: 'cli@example.com', tier: 'gold', team: 'a=b', ...c }, { key: issuer.keys[0] });
      await waitFor('discovery', async () => (await withToken(server, 'GET', '/api/v1/namespaces/default', await token({}))).status === 200);
      assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', await token({ team: 'a' }))).status, 401, 'the second required claim holds everything after the first =');
    } finally {
      await p.kill();
    }
  });

  test('bad --oidc-* flags exit non-zero with one line', async () => {
    const exit = async (args: string[]) => {
      const child = spawn(process.execPath, [new URL('../../bin/orch-apiserver.js', import.meta.url).pathname, '--secure-port=0', `--data-dir=${tempDir('oidc-cli-bad')}`, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const [code] = (await once(child, 'exit')) as [number];
      return { code, first: stderr.split('\n')[0]! };
    };
    // A process for each way out (a start-up error, a flag that does not parse); the other flags'
    // messages from the same parsing and start, in this process.
    const [invalid, unparsable] = await Promise.all([exit(['--oidc-issuer-url=http://127.0.0.1:1', '--oidc-client-id=x']), exit(['--oidc-required-claim=novalue'])]);
    assert.deepEqual(invalid, {
      code: 1,
      first: 'Error: invalid authentication configuration: jwt[0].issuer.url: Invalid value: "http://127.0.0.1:1": URL scheme must be https',
    });
    assert.equal(unparsable.code, 2);
    const refused = async (args: string[], message: string) => {
      const opts = parseArgs(['--secure-port=0', `--data-dir=${tempDir('oidc-cli-bad')}`, ...args]);
      assert.notEqual(opts, 'help');
      await assert.rejects(startServer(opts as ServerOptions), { message });
    };
    await refused(['--oidc-issuer-url=https://127.0.0.1:1'], 'oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
    await refused(['--oidc-issuer-url=https://127.0.0.1:1', '--oidc-client-id=x', '--oidc-signing-algs=RS256,none'], 'oidc: unsupported signing alg: "none"');
    await refused([`--authentication-config=${join(dir, 'whatever.yaml')}`, '--oidc-client-id=x'], 'authentication-config file and oidc-* flags are mutually exclusive');
  });
});

// ---------------------------------------------------------------------------------------------
// The AuthenticationConfiguration file.

const fileIssuer = await startIssuer('/realm');
const configFile = join(dir, 'authn.yaml');

function configYaml(o: { claimRule?: string; extraAudience?: string; anonymousPaths?: string[] } = {}): string {
  return `apiVersion: apiserver.config.orch.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${fileIssuer.url}
    discoveryURL: ${fileIssuer.url}/.well-known/openid-configuration
    certificateAuthority: |
${fileIssuer.ca.trim().split('\n').map((l) => `      ${l}`).join('\n')}
    audiences: [orch${o.extraAudience ? `, ${o.extraAudience}` : ''}]
    audienceMatchPolicy: MatchAny
  claimValidationRules:
  - expression: "${o.claimRule ?? "claims.tier == 'gold'"}"
    message: only gold tier
  claimMappings:
    username:
      expression: "'user:' + claims.sub"
    groups:
      expression: "claims.?roles.orValue([]).map(r, 'role:' + r)"
    uid:
      claim: uid
    extra:
    - key: example.com/team
      valueExpression: "claims.?team.orValue('')"
  userValidationRules:
  - expression: "!user.username.startsWith('user:system')"
    message: no system users
anonymous:
  enabled: true
  conditions:
${(o.anonymousPaths ?? ['/livez']).map((p) => `  - path: ${p}`).join('\n')}
`;
}

writeFileSync(configFile, configYaml());
const fileAuthz = recordingAuthorizer();
const fileLogs: string[] = [];
const fromFile = await testServer({ authentication: { authenticationConfig: configFile, jwtKeyRefreshIntervalMs: KEY_REFRESH_MS }, authorizer: fileAuthz, log: (m) => fileLogs.push(m) });
const fileToken = (claims: Record<string, unknown> = {}) => fileIssuer.sign({ sub: 'bob', uid: 'u-1', tier: 'gold', roles: ['a', 'b'], team: 'blue', ...claims });

describe('--authentication-config', () => {
  test('expression mappings (username, groups, extra), uid claim; any known algorithm', async () => {
    await waitFor('discovery', async () => (await withToken(fromFile, 'GET', '/api/v1/namespaces/f1', await fileToken())).status === 404);
    assert.deepEqual(fileAuthz.seen.get('/api/v1/namespaces/f1'), { name: 'user:bob', uid: 'u-1', groups: ['role:a', 'role:b', 'system:authenticated'], extra: { 'example.com/team': ['blue'] } });
    // No roles and an empty team: no groups and no extra.
    await withToken(fromFile, 'GET', '/api/v1/namespaces/f2', await fileToken({ roles: undefined, team: '' }));
    assert.deepEqual(fileAuthz.seen.get('/api/v1/namespaces/f2'), { name: 'user:bob', uid: 'u-1', groups: ['system:authenticated'] });
    const ps = await newKey('ps', 'PS256');
    fileIssuer.keys.push(ps);
    await waitFor('the PS256 key', async () => (await withToken(fromFile, 'GET', '/api/v1/namespaces/f3', await fileIssuer.sign({ sub: 'p', uid: 'u', tier: 'gold' }, { key: ps }))).status === 404);
  });

  test('failed claim rule, failed user rule, wrong issuer: 401, nothing created, the rule message logged', async () => {
    for (const [what, token] of [
      ['claim rule', await fileToken({ tier: 'bronze' })],
      ['user rule', await fileToken({ sub: 'system-admin' })],
      ['uid claim missing', await fileToken({ uid: undefined })],
      ['wrong issuer (another path of the same host)', await fileIssuer.sign({ iss: fileIssuer.url.replace('/realm', '/other'), sub: 'x', uid: 'u', tier: 'gold' })],
    ] as const) {
      const r = await withToken(fromFile, 'POST', '/api/v1/namespaces', token, namespace('by-bad-file-token'));
      assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED], what);
    }
    assert.equal((await api(fromFile, 'GET', '/api/v1/namespaces/by-bad-file-token')).status, 404);
    assert.ok(fileLogs.some((l) => l.includes("validation expression 'claims.tier == 'gold'' failed: only gold tier")), fileLogs.join('\n'));
    assert.ok(fileLogs.some((l) => l.includes('failed: no system users')));
  });

  test('anonymous only on the paths of its conditions', async () => {
    assert.equal((await withToken(fromFile, 'GET', '/livez', undefined)).status, 200);
    assert.deepEqual((await withToken(fromFile, 'GET', '/readyz', undefined)).status, 401);
    assert.deepEqual((await withToken(fromFile, 'GET', '/api/v1/namespaces', undefined)).status, 401);
  });

  test('a changed file is reloaded (metric); a bad one is logged and the old configuration kept', async () => {
    const tsLine = /^apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds\{status="success"/;
    const failLine = /^apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds\{status="failure"/;
    assert.equal((await withToken(fromFile, 'GET', '/api/v1/namespaces/r0', await fileToken({ tier: 'silver' }))).status, 401);
    writeFileSync(configFile, configYaml({ claimRule: "claims.tier == 'silver'" }));
    await waitFor('the reload', async () => (await metric(fromFile, tsLine)) > 0);
    assert.equal((await withToken(fromFile, 'GET', '/api/v1/namespaces/r1', await fileToken({ tier: 'silver' }))).status, 404);
    assert.equal((await withToken(fromFile, 'GET', '/api/v1/namespaces/r2', await fileToken({ tier: 'gold' }))).status, 401);
    // A file that does not compile keeps the previous configuration.
    writeFileSync(configFile, configYaml({ claimRule: 'claims.tier ==' }));
    await waitFor('the failed reload', async () => (await metric(fromFile, failLine)) > 0);
    assert.ok(fileLogs.some((l) => /failed to load authentication config: jwt\[0\]\.claimValidationRules\[0\]\.expression: Invalid value: "claims\.tier ==": compilation failed: ERROR: <input>/.test(l)), fileLogs.join('\n'));
    assert.equal((await withToken(fromFile, 'GET', '/api/v1/namespaces/r3', await fileToken({ tier: 'silver' }))).status, 404);
    // Anonymous may not change after start.
    writeFileSync(configFile, configYaml({ claimRule: "claims.tier == 'silver'", anonymousPaths: ['/livez', '/readyz'] }));
    await waitFor('the refusal', () => fileLogs.some((l) => l.includes('anonymous: Forbidden: changed from initial configuration file')));
  });

  test('validation messages and exclusivity at start', async () => {
    const fails = async (text: string, message: string | ((file: string) => string) | RegExp, extra: NonNullable<ServerOptions['authentication']> = {}) => {
      const f = join(dir, `bad-${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(f, text);
      await assert.rejects(startServer({ authentication: { authenticationConfig: f, ...extra } }), (e: Error) => {
        if (message instanceof RegExp) assert.match(e.message, message);
        else assert.equal(e.message, typeof message === 'string' ? message : message(f));
        return true;
      });
      return f;
    };
    const head = 'apiVersion: apiserver.config.orch.io/v1\nkind: AuthenticationConfiguration\n';
    const f = await fails(
      `${head}jwt:\n- issuer:\n    url: http://x.example\n    audiences: [a, b]\n  claimMappings:\n    username:\n      claim: sub\n`,
      'invalid authentication configuration: [jwt[0].issuer.url: Invalid value: "http://x.example": URL scheme must be https, jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences, jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing]',
    );
    await fails(
      `${head}jwt:\n- issuer:\n    url: https://x.example\n    audiences: [a]\n  claimMappings:\n    username:\n      expression: claims.email\n    extra:\n    - key: orch.io/x\n      valueExpression: claims.x\n  claimValidationRules:\n  - expression: claims.admin\n`,
      'invalid authentication configuration: [jwt[0].claimValidationRules[0].expression: Invalid value: "claims.admin": must evaluate to bool, jwt[0].claimMappings.extra[0].key: Invalid value: "orch.io/x": orch.io and their subdomains are reserved for orch use, jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression]',
    );
    await fails(`${head}jwt:\n- issuer:\n    url: https://x.example\n    audience: [a]\n`, (file) => `failed to load authentication configuration from file "${file}": strict decoding error: unknown field "jwt[0].issuer.audience"`);
    await fails('apiVersion: apiserver.config.orch.io/v9\nkind: AuthenticationConfiguration\n', /no kind "AuthenticationConfiguration" is registered for version "apiserver.config.orch.io\/v9"$/);
    await fails(`${head}jwt: [${Array.from({ length: 65 }, (_, i) => `{issuer: {url: "https://i${i}.example", audiences: [a]}, claimMappings: {username: {claim: sub, prefix: ""}}}`).join(', ')}]\n`, 'invalid authentication configuration: jwt: Too many: 65: must have at most 64 items');
    await fails(`${head}anonymous:\n  enabled: false\n  conditions:\n  - path: /livez\n`, /^invalid authentication configuration: anonymous\.conditions: Invalid value: .*: enabled should be set to true when conditions are defined$/);
    await fails(`${head}anonymous:\n  enabled: true\n`, 'anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file', { anonymousAuth: true });
    await assert.rejects(startServer({ authentication: { authenticationConfig: f, oidc: { issuerUrl: issuer.url, clientId: 'orch' } } }), { message: 'authentication-config file and oidc-* flags are mutually exclusive' });
  });
});
