// CA bundles that follow their file, as kube-apiserver's dynamic CA content does: the file is read
// again when it changes (a watch of its folder, so a file replaced by a rename is seen too) and at
// least every `intervalMs` (a minute by default). A new content that holds no valid certificate, or
// a file that cannot be read, keeps the old certificates and is logged once.

import type { X509Certificate } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { parseCertificates } from './x509.ts';

/** The certificates of a CA bundle, as they are now. */
export interface CaSource {
  /** The current certificates; a new array after each change. */
  certificates(): readonly X509Certificate[];
  /** The current bundle (PEM), as the TLS handshake names it to clients. */
  pem(): string;
  /** False once the content has changed since the start. */
  readonly unchanged: boolean;
  /** `listener` runs after each change of content. */
  onChange(listener: () => void): void;
  close(): void;
}

/** A bundle that never changes (the generated CA, or a test's). */
export function staticCa(pem: string, source: string): CaSource {
  const certs = parseCertificates(pem, source);
  return { certificates: () => certs, pem: () => pem, unchanged: true, onChange() {}, close() {} };
}

export interface CaFileOptions {
  /** The flag that named the file, for messages (`--client-ca-file`). */
  flag: string;
  /** Longest time between two reads (default one minute). */
  intervalMs?: number;
  log: (message: string) => void;
}

export const DEFAULT_CA_RELOAD_MS = 60_000;

/** The bundle in `path`, followed as it changes. Throws a start-up error when it cannot be read or holds no certificate. */
export function caFile(path: string, o: CaFileOptions): CaSource {
  const read = () => readFileSync(path, 'utf8');
  let text: string;
  try {
    text = read();
  } catch (e) {
    throw new Error(`${o.flag}: ${(e as Error).message}`);
  }
  let certs = parseCertificates(text, `${o.flag} ${path}`);
  let unchanged = true;
  /** The last bad content logged, so that a bad file is logged once, not at every check. */
  let lastProblem: string | undefined;
  const listeners: (() => void)[] = [];
  const check = () => {
    let next: string;
    let nextCerts: X509Certificate[];
    try {
      next = read();
      if (next === text) {
        lastProblem = undefined;
        return;
      }
      nextCerts = parseCertificates(next, `${o.flag} ${path}`);
    } catch (e) {
      const problem = (e as Error).message;
      if (problem !== lastProblem) o.log(`Unable to reload ${o.flag} ${path}, keeping its previous certificates: ${problem}`);
      lastProblem = problem;
      return;
    }
    lastProblem = undefined;
    text = next;
    certs = nextCerts;
    unchanged = false;
    o.log(`Loaded a new CA bundle from ${o.flag} ${path} (${certs.length} certificate${certs.length === 1 ? '' : 's'})`);
    for (const l of listeners) l();
  };
  const timer = setInterval(check, o.intervalMs ?? DEFAULT_CA_RELOAD_MS);
  timer.unref();
  let watcher: FSWatcher | undefined;
  try {
    const name = basename(path);
    watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
      if (file === null || file === name) check();
    });
    watcher.on('error', () => {
      // The folder went away: the timer still checks.
      watcher?.close();
      watcher = undefined;
    });
  } catch {
    // No watch available: the timer alone.
  }
  return {
    certificates: () => certs,
    pem: () => text,
    get unchanged() {
      return unchanged;
    },
    onChange: (l) => void listeners.push(l),
    close() {
      clearInterval(timer);
      watcher?.close();
    },
  };
}
