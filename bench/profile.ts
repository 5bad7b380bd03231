/**
 * node bench/profile.ts FILE.cpuprofile [--top=40]: where a V8 CPU profile's time went, by function
 * (self time) and by where the code lives (the service's own files by layer, each package, Node's
 * internals, GC), in µs per request when `--requests=N` is given, else in ms.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from './lib.ts';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const args = parseArgs(process.argv.slice(2));
const file = process.argv.slice(2).find((a) => !a.startsWith('--'));
if (!file) throw new Error('usage: node bench/profile.ts FILE.cpuprofile [--requests=N] [--top=40]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const requests = Number(args.get('requests') ?? 0);
const top = Number(args.get('top') ?? 40);

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});

/** Where a frame's code lives: src/<layer>, a package, node internals, or V8's own work. */
function place(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  const own = /\/(src|bench)\/([^/]+)(\/[^/]+)?/.exec(url);
  if (own) return own[3] && !own[2]?.endsWith('.ts') ? `${own[1]}/${own[2]}` : `${own[1]}/${own[2]}`;
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
let total = 0;
for (const [id, us] of selfUs) {
  const node = byId.get(id) as Node;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = place(url, functionName);
  const name = `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}` : ''}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  byPlace.set(where, (byPlace.get(where) ?? 0) + us);
  total += us;
}
const unit = requests > 0 ? 'µs/request' : 'ms';
const show = (us: number) => (requests > 0 ? (us / requests).toFixed(2) : (us / 1000).toFixed(1));
const print = (title: string, map: Map<string, number>, n: number) => {
  console.log(`${title} (${unit}, share of ${show(total)})`);
  for (const [name, us] of [...map].sort((x, y) => y[1] - x[1]).slice(0, n))
    console.log(`  ${show(us).padStart(9)}  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${name}`);
};
print('by place', byPlace, 30);
print('by function (self time)', byFunction, top);

const under = args.get('under');
if (under) {
  const pattern = new RegExp(under);
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url, lineNumber } = (byId.get(at) as Node).callFrame;
      if (!pattern.test(functionName)) continue;
      const name = `${functionName} ${url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}`;
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  }
  print(`inclusive time of /${under}/`, inclusive, top);
}

// --callers=REGEX: who calls the functions whose name matches, by inclusive time.
const callersOf = args.get('callers');
if (callersOf) {
  const pattern = new RegExp(callersOf);
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusiveBy = new Map<string, number>();
  const label = (id: number) => {
    const { functionName, url, lineNumber } = (byId.get(id) as Node).callFrame;
    return `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}`;
  };
  for (const [id, us] of selfUs) {
    const chain: number[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) chain.push(at);
    // The outermost matching frame, and the first frame above it that is not itself a match.
    const outer = chain.findLastIndex((at) => pattern.test((byId.get(at) as Node).callFrame.functionName));
    if (outer < 0) continue;
    const caller = chain
      .slice(outer + 1)
      .find((at) => !pattern.test((byId.get(at) as Node).callFrame.functionName));
    const name = caller === undefined ? '(root)' : label(caller);
    inclusiveBy.set(name, (inclusiveBy.get(name) ?? 0) + us);
  }
  print(`callers of /${callersOf}/`, inclusiveBy, top);
}

// --within=REGEX: self time of the functions called (at any depth) by those whose name matches.
const within = args.get('within');
if (within) {
  const pattern = new RegExp(within);
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inside = new Map<string, number>();
  for (const [id, us] of selfUs) {
    let match = false;
    for (let at: number | undefined = id; at !== undefined && !match; at = parent.get(at))
      match = pattern.test((byId.get(at) as Node).callFrame.functionName);
    if (!match) continue;
    const { functionName, url, lineNumber } = (byId.get(id) as Node).callFrame;
    const name = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}`;
    inside.set(name, (inside.get(name) ?? 0) + us);
  }
  print(`self time within /${within}/`, inside, top);
}
