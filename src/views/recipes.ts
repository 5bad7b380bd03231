/** A recipe's answer in the list envelope: its rows in `data`, everything else about them in `meta`. */
import { z } from 'zod';
import type { RecipeInfo } from '../domain/recipes.ts';

export const recipeOut = z.object({
  data: z.array(z.record(z.string(), z.unknown())),
  meta: z.looseObject({ recipe: z.string(), count: z.int() }),
});

export type RecipeView = z.infer<typeof recipeOut>;

export function presentRecipeResult(value: Record<string, unknown>): RecipeView {
  const meta: Record<string, unknown> = {};
  let data: Record<string, unknown>[] = [];
  for (const [name, member] of Object.entries(value)) {
    if (Array.isArray(member)) data = member as Record<string, unknown>[];
    else meta[name] = member;
  }
  return { data, meta: meta as RecipeView['meta'] };
}

export const recipeInfoOut = z.object({
  name: z.string(),
  path: z.string(),
  title: z.string(),
  description: z.string(),
  reads: z.array(z.string()),
  list_cost: z.int(),
  p0: z.boolean(),
  parameters: z.array(
    z.object({ name: z.string(), description: z.string(), default: z.string().nullable() }),
  ),
});

export function presentRecipeInfo(info: RecipeInfo, listCost: number, p0: boolean) {
  return { ...info, list_cost: listCost, p0 };
}
