/**
 * node_modules/.bin/node bench/profile.ts FILE.cpuprofile... [--requests=N] [--top=40]: where the CPU
 * time of V8 CPU profiles went, one report per file, by where the code lives (the service's own files by
 * layer, each package, Node's internals, GC) and by function (self time), in µs per request with
 * `--requests=N` (what `npm run bench -- --only=…` prints as served), else in ms. Idle time is left out.
 *   --under=REGEX    the inclusive time of the functions whose name matches (a hook calls the next hook,
 *                    so for hooks read the self times --within lists instead)
 *   --within=REGEX   the self time of everything those functions called
 *   --callers=REGEX  who calls them, by inclusive time
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
const files = process.argv.slice(2).filter((a) => !a.startsWith('--') && a.endsWith('.cpuprofile'));
if (files.length === 0) {
  throw new Error(
    'usage: node_modules/.bin/node bench/profile.ts FILE.cpuprofile... [--requests=N] [--top=40]',
  );
}
const requests = Number(args.get('requests') ?? 0);
const top = Number(args.get('top') ?? 40);
/** File URLs are read relative to the repository (the bench runs from its root). */
const root = `file://${process.cwd()}/`;

/** Where a frame's code lives: src/<layer>, a package, node internals, or V8's own work. */
function place(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const path = url.startsWith(root) ? url.slice(root.length) : url;
  const pkg = /^(?:.*\/)?node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1] as string;
  // dist/src/… is the build of src/…: both count as the service's own code.
  const own = /^(?:dist\/)?(src|bench)\/([^/]+)/.exec(path);
  return own ? `${own[1]}/${own[2]}` : path;
}

function label(node: Node): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const path = url.startsWith(root) ? url.slice(root.length) : url.replace(/^.*\/node_modules\//, '');
  return `${functionName || '(anonymous)'} ${path ? `${path}:${lineNumber + 1}` : ''}`;
}

function report(file: string): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frame = (id: number) => byId.get(id) as Node;
  // timeDeltas[i] is the time from sample i - 1 to sample i: each sample is charged the time until the
  // next one, as DevTools does.
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    if (frame(id).callFrame.functionName === '(idle)') return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  });
  const total = [...selfUs.values()].reduce((sum, us) => sum + us, 0);

  const unit = requests > 0 ? 'µs/request' : 'ms';
  const show = (us: number) => (requests > 0 ? (us / requests).toFixed(2) : (us / 1000).toFixed(1));
  const print = (title: string, map: Map<string, number>) => {
    console.log(`${title} (${unit}, of ${show(total)} of CPU)`);
    for (const [name, us] of [...map].sort((x, y) => y[1] - x[1]).slice(0, top))
      console.log(`  ${show(us).padStart(9)}  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${name}`);
  };
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  const chain = (id: number) => {
    const ids: number[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) ids.push(at);
    return ids;
  };

  console.log(`== ${file}`);
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, us] of selfUs) {
    add(byPlace, place(frame(id).callFrame.url, frame(id).callFrame.functionName), us);
    add(byFunction, label(frame(id)), us);
  }
  print('by place', byPlace);
  print('by function (self time)', byFunction);

  const under = args.get('under');
  if (under) {
    const pattern = new RegExp(under);
    const inclusive = new Map<string, number>();
    for (const [id, us] of selfUs) {
      const names = new Set(
        chain(id)
          .filter((at) => pattern.test(frame(at).callFrame.functionName))
          .map((at) => label(frame(at))),
      );
      for (const name of names) add(inclusive, name, us);
    }
    print(`inclusive time of /${under}/`, inclusive);
  }

  const within = args.get('within');
  if (within) {
    const pattern = new RegExp(within);
    const inside = new Map<string, number>();
    for (const [id, us] of selfUs) {
      if (chain(id).some((at) => pattern.test(frame(at).callFrame.functionName)))
        add(inside, label(frame(id)), us);
    }
    print(`self time within /${within}/`, inside);
  }

  const callersOf = args.get('callers');
  if (callersOf) {
    const pattern = new RegExp(callersOf);
    const matches = (at: number) => pattern.test(frame(at).callFrame.functionName);
    const byCaller = new Map<string, number>();
    for (const [id, us] of selfUs) {
      const ids = chain(id);
      // The outermost matching frame, and the first frame above it that is not itself a match.
      const outer = ids.findLastIndex(matches);
      if (outer < 0) continue;
      const caller = ids.slice(outer + 1).find((at) => !matches(at));
      add(byCaller, caller === undefined ? '(root)' : label(frame(caller)), us);
    }
    print(`callers of /${callersOf}/`, byCaller);
  }
}

for (const file of files) report(file);
