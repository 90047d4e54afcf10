// /livez, /readyz and /healthz with named checks, `?verbose`, `?exclude=` and `/<endpoint>/<check>`,
// worded as kube-apiserver's healthz package prints them.

export interface HealthCheck {
  name: string;
  /** Resolves with nothing when healthy; throws or rejects with the reason otherwise. */
  check(): Promise<void> | void;
}

interface HealthResult {
  code: number;
  body: string;
}

export async function runHealth(endpoint: string, checks: readonly HealthCheck[], query: URLSearchParams, only?: string): Promise<HealthResult | undefined> {
  if (only !== undefined) {
    const c = checks.find((x) => x.name === only);
    if (!c) return undefined;
    try {
      await c.check();
      return { code: 200, body: 'ok' };
    } catch {
      return { code: 500, body: `internal server error: ${only} check failed` };
    }
  }
  const excluded = new Set(query.getAll('exclude').flatMap((e) => e.split(',')).filter(Boolean));
  const verboseParam = query.get('verbose');
  const verbose = verboseParam !== null && verboseParam !== 'false' && verboseParam !== '0';
  const lines: string[] = [];
  let failed = false;
  for (const c of checks) {
    if (excluded.has(c.name)) {
      excluded.delete(c.name);
      lines.push(`[+]${c.name} excluded: ok`);
      continue;
    }
    try {
      await c.check();
      lines.push(`[+]${c.name} ok`);
    } catch {
      failed = true;
      lines.push(`[-]${c.name} failed: reason withheld`);
    }
  }
  for (const e of excluded) lines.push(`warn: some health checks cannot be excluded: no matches for "${e}"`);
  if (failed) return { code: 500, body: `${lines.join('\n')}\n${endpoint} check failed\n` };
  if (!verbose) return { code: 200, body: 'ok' };
  return { code: 200, body: `${lines.join('\n')}\n${endpoint} check passed\n` };
}
