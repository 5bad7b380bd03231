/**
 * The TypeScript client's types, written by openapi-typescript from the OpenAPI document. openapi-typescript
 * prints with the TypeScript 5 compiler API, which TypeScript 7 (our `tsc`) no longer ships: its import of
 * `typescript` is pointed at the `typescript-5` alias installed beside it.
 */
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    const fromGenerator = context.parentURL?.includes('/node_modules/openapi-typescript/') ?? false;
    return nextResolve(specifier === 'typescript' && fromGenerator ? 'typescript-5' : specifier, context);
  },
});

const { default: openapiTS, astToString } = await import('openapi-typescript');

export async function typescriptSchema(document: Record<string, unknown>): Promise<string> {
  // biome-ignore lint/suspicious/noExplicitAny: openapi-typescript types the document by its own OpenAPI model
  const nodes = await openapiTS(document as any, { alphabetize: false });
  return astToString(nodes);
}
