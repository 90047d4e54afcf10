// The real, unmodified @kubernetes/client-node, loaded for Node 20.

import zlib from 'node:zlib';
import workerThreads from 'node:worker_threads';
import { tlsFor } from './tls-clients.ts';
import type * as K8s from '@kubernetes/client-node';

// ---- Node 20 compatibility of client-node's HTTP stack ----
//
// client-node 2.x depends on undici 8, which declares Node >= 22.19 and touches three APIs Node 20
// lacks while loading or fetching: zlib.createZstdDecompress (bound at module load, used only for a
// `Content-Encoding: zstd` response, which this server never sends), worker_threads.markAsUncloneable
// (marks web objects uncloneable; a no-op changes nothing for HTTP) and Promise.withResolvers. The
// shims below fill exactly those gaps, only when missing, before the client is imported (hence the
// dynamic import); client-node and undici themselves run unmodified.
function installNode20Shims(): void {
  const z = zlib as unknown as Record<string, unknown>;
  if (typeof z.createZstdDecompress !== 'function') {
    Object.defineProperty(zlib, 'createZstdDecompress', {
      value: () => {
        throw new Error('zstd decompression is not available on this Node.js version');
      },
      configurable: true,
      enumerable: true,
      writable: true,
    });
  }
  const wt = workerThreads as unknown as Record<string, unknown>;
  if (typeof wt.markAsUncloneable !== 'function') {
    Object.defineProperty(workerThreads, 'markAsUncloneable', { value: () => {}, configurable: true, enumerable: true, writable: true });
  }
  const P = Promise as unknown as Record<string, unknown>;
  if (typeof P.withResolvers !== 'function') {
    Object.defineProperty(Promise, 'withResolvers', {
      value: function withResolvers<T>() {
        let resolve!: (v: T | PromiseLike<T>) => void;
        let reject!: (e: unknown) => void;
        const promise = new Promise<T>((res, rej) => {
          resolve = res;
          reject = rej;
        });
        return { promise, resolve, reject };
      },
      configurable: true,
      writable: true,
    });
  }
}

/** client-node, with the Node 20 gaps filled first. */
export async function loadClientNode(): Promise<typeof K8s> {
  installNode20Shims();
  return import('@kubernetes/client-node');
}

/** A KubeConfig with one context for the server at `url`: over HTTPS, as its administrator. */
export function kubeConfigFor(k8s: typeof K8s, url: string): K8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  const tls = tlsFor(url);
  const b64 = (pem: string) => Buffer.from(pem).toString('base64');
  kc.loadFromOptions({
    clusters: [tls ? { name: 't', server: url, caData: b64(tls.ca), skipTLSVerify: false } : { name: 't', server: url, skipTLSVerify: true }],
    users: [tls ? { name: 'u', certData: b64(tls.cert), keyData: b64(tls.key) } : { name: 'u' }],
    contexts: [{ name: 't', cluster: 't', user: 'u' }],
    currentContext: 't',
  });
  return kc;
}
