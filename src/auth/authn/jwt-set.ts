// The JWT authenticators of the configuration as one token authenticator, replaced as a whole
// when `--authentication-config` changes: the file is watched, a new version that does not decode
// or validate is logged and the old authenticators stay; a valid one is built, its issuers must
// become ready (discovery) within a minute, and only then does it take over. Each outcome is
// reported (`apiserver_authentication_config_controller_*`).

import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { AuthenticationResult } from './authenticator.ts';
import type { TokenAuthenticator } from './bearer-token.ts';
import { newJwtAuthenticator, type JwtAuthenticator, type JwtAuthenticatorOptions } from './jwt.ts';
import { decodeAuthenticationConfiguration, validateAuthenticationConfiguration, type AnonymousConfig, type CompiledJwtAuthenticator, type ValidationContext } from './jwt-config.ts';

export interface ReloadStats {
  reloaded(ok: boolean, configText?: string): void;
}

/** JWT authenticators in a union: the first whose issuer the token names decides. */
export function jwtUnion(list: readonly JwtAuthenticator[]): TokenAuthenticator {
  return {
    async authenticateToken(token): Promise<AuthenticationResult> {
      for (const a of list) {
        const r = await a.authenticateToken(token);
        if (r.kind !== 'no-credential') return r;
      }
      return { kind: 'no-credential' };
    },
  };
}

export interface ReloadingJwt extends TokenAuthenticator {
  close(): void;
}

export interface ReloadOptions {
  path: string;
  /** The text the server started with (already decoded and validated). */
  initialText: string;
  initial: CompiledJwtAuthenticator[];
  /** The anonymous section the server started with: a reload may not change it. */
  anonymous: AnonymousConfig | undefined;
  group: string;
  validation: ValidationContext;
  jwt: JwtAuthenticatorOptions;
  log: (message: string) => void;
  stats?: ReloadStats;
  /** How long new issuers may take to become ready (default 1 min). */
  readyTimeoutMs?: number;
  /** Besides change events, how often the file is read again (default 1 min). */
  pollIntervalMs?: number;
}

export function reloadingJwtAuthenticators(o: ReloadOptions): ReloadingJwt {
  let current = o.initial.map((c) => newJwtAuthenticator(c, o.jwt));
  let union = jwtUnion(current);
  let tracked = o.initialText;
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  const building = new Set<JwtAuthenticator>();

  const reload = async (): Promise<void> => {
    let text: string;
    try {
      text = readFileSync(o.path, 'utf8');
    } catch (e) {
      o.log(`failed to read authentication config file: ${(e as Error).message}`);
      o.stats?.reloaded(false);
      return;
    }
    if (text === tracked) return;
    // A file that does not decode or validate never will: remember it so it is not retried.
    let compiled: CompiledJwtAuthenticator[];
    try {
      const config = decodeAuthenticationConfiguration(text, o.group);
      const v = validateAuthenticationConfiguration(config, o.validation);
      const messages = v.errors.map((e) => e.message);
      if (JSON.stringify(config.anonymous) !== JSON.stringify(o.anonymous)) messages.push('anonymous: Forbidden: changed from initial configuration file');
      if (messages.length) throw new Error(messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`);
      compiled = v.compiled;
    } catch (e) {
      o.log(`failed to load authentication config: ${(e as Error).message}`);
      o.stats?.reloaded(false);
      tracked = text;
      return;
    }
    const next = compiled.map((c) => newJwtAuthenticator(c, o.jwt));
    for (const a of next) building.add(a);
    const deadline = Date.now() + (o.readyTimeoutMs ?? 60_000);
    let problems: string[] = [];
    for (;;) {
      problems = next.map((a) => a.healthError()).filter((p): p is string => p !== undefined);
      if (!problems.length || closed || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100).unref());
    }
    for (const a of next) building.delete(a);
    if (problems.length || closed) {
      for (const a of next) a.close();
      if (!closed) {
        o.log(`failed to update authentication config: ${problems.join(', ')}`);
        o.stats?.reloaded(false);
      }
      return;
    }
    const old = current;
    current = next;
    union = jwtUnion(next);
    for (const a of old) a.close();
    tracked = text;
    o.log('reloaded authentication config');
    o.stats?.reloaded(true, text);
  };

  const trigger = () => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = reload().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        trigger();
      }
    });
  };

  // The directory is watched, so a file replaced by a rename (as editors and ConfigMaps do) is seen.
  let watcher: FSWatcher | undefined;
  try {
    const name = basename(o.path);
    watcher = watch(dirname(o.path), { persistent: false }, (_event, file) => {
      if (file === null || file === name || String(file).startsWith('..')) trigger();
    });
    watcher.on('error', (e) => o.log(`watching authentication config file: ${e.message}`));
  } catch (e) {
    o.log(`watching authentication config file: ${(e as Error).message}`);
  }
  const poll = setInterval(trigger, o.pollIntervalMs ?? 60_000).unref();

  return {
    authenticateToken: (token) => union.authenticateToken(token),
    close() {
      closed = true;
      watcher?.close();
      clearInterval(poll);
      for (const a of current) a.close();
      for (const a of building) a.close();
    },
  };
}
