// Property names as expression identifiers, both ways, as Kubernetes escapes them: a name is
// accessible when it matches [a-zA-Z_.-/][a-zA-Z0-9_.-/]*; `__` becomes `__underscores__`, `.`
// `__dot__`, `-` `__dash__`, `/` `__slash__`, and a name that is a reserved word `__{word}__`.

const RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

const ESCAPES: Record<string, string> = { __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' };
const UNESCAPES: Record<string, string> = { underscores: '__', dot: '.', dash: '-', slash: '/' };

/** The identifier a property is reached by, or undefined when it cannot be reached. */
export function escapeName(name: string): string | undefined {
  if (name === '' || /^[0-9]/.test(name)) return undefined;
  if (RESERVED.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z0-9_./-]+$/.test(name)) return undefined;
  return name.replace(/__|[./-]/g, (m) => ESCAPES[m]!);
}

/** The property name an identifier stands for, or undefined for an invalid escape. */
export function unescapeName(escaped: string): string | undefined {
  let ok = true;
  const out = escaped.replace(/__[^_]+__/g, (m) => {
    const inner = m.slice(2, -2);
    if (inner in UNESCAPES) return UNESCAPES[inner]!;
    if (RESERVED.has(inner) && m.length === escaped.length) return inner;
    ok = false;
    return '';
  });
  return ok ? out : undefined;
}
