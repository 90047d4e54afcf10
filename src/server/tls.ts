// The TLS side of serving: the certificates, and `--tls-min-version` and `--tls-cipher-suites` as
// kube-apiserver names them (Go's version names and IANA cipher suite names) turned into Node's
// options. TLS 1.3 suites are not configurable, as in Go: they stay enabled whatever the list says.

import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CIPHERS, type SecureVersion } from 'node:tls';
import { parseCertificates } from '../auth/authn/x509.ts';
import { certificatesIn, defaultCertificateCache, processCertificates, servingHosts, type KeyPair } from './certificates.ts';
import type { ListenerTls } from './listener.ts';
import type { SecureServingOptions } from './options.ts';

const VERSIONS: Record<string, SecureVersion> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/** IANA names (Go's spelling, aliases included) → OpenSSL names. */
const CIPHERS: Record<string, string> = {
  // TLS 1.3: always enabled; listed so that naming them is not an error.
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  // Secure TLS 1.2 suites.
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  // Insecure suites, accepted as kube-apiserver accepts them (OpenSSL may have dropped some).
  TLS_RSA_WITH_RC4_128_SHA: 'RC4-SHA',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: 'ECDHE-ECDSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: 'ECDHE-RSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
};

const TLS13 = ['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256'];

export interface TlsSettings {
  minVersion: SecureVersion;
  ciphers: string;
}

/** Node's settings for the flags; an unknown version or suite name is a start-up error. */
export function tlsSettings(minVersion: string | undefined, cipherSuites: readonly string[] | undefined): TlsSettings {
  const version = minVersion === undefined || minVersion === '' ? 'TLSv1.2' : VERSIONS[minVersion];
  if (!version) throw new Error(`--tls-min-version: unknown tls version ${JSON.stringify(minVersion)}; expected one of ${Object.keys(VERSIONS).join(', ')}`);
  if (!cipherSuites?.length) return { minVersion: version, ciphers: DEFAULT_CIPHERS };
  const names: string[] = [];
  for (const suite of cipherSuites) {
    const name = CIPHERS[suite];
    if (!name) throw new Error(`--tls-cipher-suites: Cipher suite ${suite} not supported or doesn't exist`);
    if (!TLS13.includes(name)) names.push(name);
  }
  return { minVersion: version, ciphers: [...TLS13, ...new Set(names)].join(':') };
}

export interface SecureServing {
  listener: ListenerTls;
  /** What clients trust (PEM): the generated CA, and the serving certificate file's own certificates when one is given. */
  ca: string;
  /** The generated CA: issuer of the admin certificate, and the default client CA. */
  generatedCa: string;
  admin: KeyPair;
  clientCa: string;
  /** The generated service-account signing key (PKCS#8 PEM). */
  serviceAccountKey: string;
}

/**
 * Certificates and TLS settings of secure serving: the serving pair from its files or generated
 * (into the certificate directory, or once per process when there is none), the admin pair, and
 * the client CAs. Every problem is a start-up error with one line.
 */
export async function prepareSecureServing(s: SecureServingOptions, dataDir: string | undefined, bindAddress: string | undefined, clientCaFile: string | undefined): Promise<SecureServing> {
  const settings = tlsSettings(s.tlsMinVersion, s.tlsCipherSuites);
  if ((s.tlsCertFile === undefined) !== (s.tlsPrivateKeyFile === undefined)) throw new Error('--tls-cert-file and --tls-private-key-file must be given together');
  const hosts = servingHosts(s.advertiseAddress, bindAddress);
  const certDir = s.certDir ?? (dataDir === undefined ? undefined : join(dataDir, 'pki'));
  const pki = certDir === undefined ? await processCertificates(hosts, s.certificateCache === false ? undefined : (s.certificateCache ?? defaultCertificateCache())) : await certificatesIn(certDir, hosts);
  let serving = pki.serving;
  let ca = pki.ca.cert;
  if (s.tlsCertFile !== undefined && s.tlsPrivateKeyFile !== undefined) {
    serving = { cert: readPem(s.tlsCertFile, '--tls-cert-file'), key: readPem(s.tlsPrivateKeyFile, '--tls-private-key-file') };
    parseCertificates(serving.cert, `--tls-cert-file ${s.tlsCertFile}`);
    try {
      createPrivateKey(serving.key);
    } catch (e) {
      throw new Error(`--tls-private-key-file ${s.tlsPrivateKeyFile}: not a private key: ${(e as Error).message}`);
    }
    ca = `${ca.trimEnd()}\n${serving.cert.trimEnd()}\n`;
  }
  const clientCa = clientCaFile === undefined ? pki.ca.cert : readPem(clientCaFile, '--client-ca-file');
  parseCertificates(clientCa, clientCaFile === undefined ? 'the generated CA' : `--client-ca-file ${clientCaFile}`);
  return { listener: { cert: serving.cert, key: serving.key, clientCA: clientCa, ...settings }, ca, generatedCa: pki.ca.cert, admin: pki.admin, clientCa, serviceAccountKey: pki.serviceAccountKey };
}

function readPem(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`${flag}: ${(e as Error).message}`);
  }
}
