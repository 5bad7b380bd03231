/** What a face is handed (src/services.ts) reaches no store, limiter or sessions, not even through a getter. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from './helpers/server.ts';

const faceServices = [
  'credentials',
  'reads',
  'recipes',
  'accounts',
  'exports',
  'imports',
  'analyses',
  'operator',
] as const;

function accessorsOf(service: object): string[] {
  const names: string[] = [];
  for (let proto = Object.getPrototypeOf(service); proto && proto !== Object.prototype; ) {
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
      if (descriptor.get) names.push(name);
    }
    proto = Object.getPrototypeOf(proto);
  }
  return names;
}

test('no service a face is handed gives out the store, the limiter or the sessions through a getter', async () => {
  const server = await startServer({});
  try {
    const hidden = new Map<unknown, string>([
      [server.deps.store, 'store'],
      [server.deps.limiter, 'limiter'],
      [server.deps.sessions, 'sessions'],
    ]);
    const leaks: string[] = [];
    for (const name of faceServices) {
      const service = server.deps[name] as object;
      for (const getter of accessorsOf(service)) {
        const value: unknown = Reflect.get(service, getter);
        if (hidden.has(value)) leaks.push(`${name}.${getter} is the ${hidden.get(value)}`);
        if (value && typeof value === 'object') {
          for (const [field, inner] of Object.entries(value)) {
            if (hidden.has(inner)) leaks.push(`${name}.${getter}.${field} is the ${hidden.get(inner)}`);
          }
        }
      }
    }
    assert.deepEqual(leaks, []);
  } finally {
    await server.close();
  }
});
