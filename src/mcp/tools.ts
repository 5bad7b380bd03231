/**
 * The MCP tools: thin adapters from tool arguments onto the same domain calls and zod schemas as REST,
 * one per file in tools/. The two metered tools read through DataReads and Recipes (the one metered
 * path, channel `mcp`) and return their cost with their result, so the HTTP response carries the cost
 * headers too.
 */
import type { Services } from '../services.ts';
import type { McpTool } from './tool-kit.ts';
import { describeDatasetTool } from './tools/describe-dataset.ts';
import { estimateCostTool } from './tools/estimate-cost.ts';
import { getAccountTool } from './tools/get-account.ts';
import { readDatasetTool } from './tools/read-dataset.ts';
import { runRecipeTool } from './tools/run-recipe.ts';
import { searchDatasetsTool } from './tools/search-datasets.ts';

export function createTools(deps: Services): McpTool[] {
  const { accounts, catalog, pricing, reads, recipes } = deps;
  return [
    searchDatasetsTool(catalog, reads),
    describeDatasetTool(reads, pricing),
    readDatasetTool(reads, catalog, deps.config.pricing.eur_per_token),
    runRecipeTool(recipes, pricing),
    getAccountTool(accounts),
    estimateCostTool(reads, recipes, pricing),
  ];
}
