// Reads the Prometheus text exposition format (version 0.0.4) strictly enough for tests: every
// line is a comment (`# HELP`, `# TYPE`, others ignored), blank, or a sample
// `name{label="value",…} value [timestamp]` with the format's escapes in label values (\\, \",
// \n). A malformed line throws, so a test fails on output a real scraper would refuse.

export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum`, `x_count` for a histogram `x`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const v = Number(text);
  if (text === '' || Number.isNaN(v)) throw new Error(`bad sample value in ${JSON.stringify(line)}`);
  return v;
}

function parseSample(line: string): Sample {
  const name = NAME.exec(line)?.[0];
  if (!name) throw new Error(`bad metric name in ${JSON.stringify(line)}`);
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    while (line[i] !== '}') {
      const label = LABEL_NAME.exec(line.slice(i))?.[0];
      if (!label || line[i + label.length] !== '=' || line[i + label.length + 1] !== '"') throw new Error(`bad label in ${JSON.stringify(line)}`);
      i += label.length + 2;
      let value = '';
      for (;;) {
        const c = line[i++];
        if (c === undefined) throw new Error(`unterminated label value in ${JSON.stringify(line)}`);
        if (c === '"') break;
        if (c === '\\') {
          const e = line[i++];
          if (e === 'n') value += '\n';
          else if (e === '\\' || e === '"') value += e;
          else throw new Error(`bad escape in ${JSON.stringify(line)}`);
        } else value += c;
      }
      if (Object.hasOwn(labels, label)) throw new Error(`label ${label} twice in ${JSON.stringify(line)}`);
      labels[label] = value;
      if (line[i] === ',') i++;
      else if (line[i] !== '}') throw new Error(`bad label list in ${JSON.stringify(line)}`);
    }
    i++;
  }
  if (line[i] !== ' ') throw new Error(`no value in ${JSON.stringify(line)}`);
  const [value, timestamp, extra] = line.slice(i + 1).trim().split(/ +/);
  if (extra !== undefined || (timestamp !== undefined && !/^-?\d+$/.test(timestamp))) throw new Error(`bad sample in ${JSON.stringify(line)}`);
  return { name, labels, value: parseValue(value ?? '', line) };
}

/** The families of an exposition, by name; samples of a histogram or summary go to their family. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, help: '', type: 'untyped', samples: [] }));
    return f;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
      if (m?.[1] === 'HELP') family(m[2]!).help = m[3]!.replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
      else if (m?.[1] === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(m[3]!)) throw new Error(`bad type in ${JSON.stringify(line)}`);
        family(m[2]!).type = m[3]!;
      }
      continue;
    }
    const s = parseSample(line);
    const owner = [...families.values()].find((f) => (f.type === 'histogram' || f.type === 'summary') && [`${f.name}_bucket`, `${f.name}_sum`, `${f.name}_count`].includes(s.name));
    (owner ?? family(s.name)).samples.push(s);
  }
  return families;
}
