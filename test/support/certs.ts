// Certificates made in a test: CAs, intermediates and client or serving certificates with any
// subject, validity window and usage, so the authenticators' negative cases need no fixtures.

import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const EC = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' };
const DAY = 24 * 3600 * 1000;

export interface TestCert {
  /** PEM. */
  cert: string;
  key: string;
  /** For signing further certificates. */
  keys: webcrypto.CryptoKeyPair;
  subject: string;
}

async function keyPem(key: webcrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

const newKeys = async () => (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;

/** A self-signed CA. */
export async function makeCa(cn = 'test-ca'): Promise<TestCert> {
  const keys = await newKeys();
  const subject = `CN=${cn}`;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: subject,
    keys,
    signingAlgorithm: SIGNING,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 30 * DAY),
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true)],
  });
  return { cert: cert.toString('pem'), key: await keyPem(keys.privateKey), keys, subject };
}

export interface CertOptions {
  /** `CN=alice, O=dev, O=ops` */
  subject: string;
  notBefore?: Date;
  notAfter?: Date;
  /** Default client. */
  usage?: 'client' | 'server' | 'none';
  /** An intermediate CA. */
  ca?: boolean;
  /** Subject alternative names of a serving certificate. */
  hosts?: { type: 'dns' | 'ip'; value: string }[];
}

/** A certificate issued by `issuer`. */
export async function issueCert(issuer: TestCert, o: CertOptions): Promise<TestCert> {
  const keys = await newKeys();
  const extensions: x509.Extension[] = [new x509.BasicConstraintsExtension(o.ca ?? false, undefined, true)];
  if (o.ca) extensions.push(new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true));
  else extensions.push(new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true));
  const usage = o.usage ?? (o.ca ? 'none' : 'client');
  if (usage !== 'none') extensions.push(new x509.ExtendedKeyUsageExtension([usage === 'client' ? x509.ExtendedKeyUsage.clientAuth : x509.ExtendedKeyUsage.serverAuth]));
  if (o.hosts) extensions.push(new x509.SubjectAlternativeNameExtension(o.hosts));
  const cert = await x509.X509CertificateGenerator.create({
    subject: o.subject,
    issuer: issuer.subject,
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: SIGNING,
    notBefore: o.notBefore ?? new Date(Date.now() - DAY),
    notAfter: o.notAfter ?? new Date(Date.now() + 7 * DAY),
    extensions,
  });
  return { cert: cert.toString('pem'), key: await keyPem(keys.privateKey), keys, subject: o.subject };
}

/**
 * Whether this Node.js gives a TLS server the chain a client sent (getPeerCertificate(true) with
 * the intermediate as `issuerCertificate`). Some releases hand the server only the leaf (a known
 * Node.js regression: the handshake code consumes the chain), so what the server can verify
 * through an intermediate depends on the runtime: a test asks this instead of naming versions.
 */
export async function serverSeesClientChain(): Promise<boolean> {
  const { createServer, connect } = await import('node:tls');
  const ca = await makeCa('chain-probe-ca');
  const intermediate = await issueCert(ca, { subject: 'CN=chain-probe-intermediate', ca: true });
  const leaf = await issueCert(intermediate, { subject: 'CN=chain-probe-leaf' });
  const serving = await issueCert(ca, { subject: 'CN=localhost', usage: 'server', hosts: [{ type: 'ip', value: '127.0.0.1' }] });
  return new Promise<boolean>((resolve, reject) => {
    const server = createServer({ cert: serving.cert, key: serving.key, ca: ca.cert, requestCert: true, rejectUnauthorized: false }, (socket) => {
      const peer = socket.getPeerCertificate(true);
      const issuer = peer.issuerCertificate as { subject?: { CN?: string } } | undefined;
      socket.end();
      server.close();
      resolve(issuer?.subject?.CN === 'chain-probe-intermediate');
    });
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      const client = connect({ host: '127.0.0.1', port, ca: ca.cert, cert: `${leaf.cert.trimEnd()}\n${intermediate.cert}`, key: leaf.key }, () => client.end());
      client.on('error', () => {});
    });
  });
}
