/** The REST face: every /api/v1 route, each resource in its own file under routes/. */

import type { TypedApp } from '../edge/server.ts';
import type { Services } from '../services.ts';
import { registerAdminRoutes } from './routes/admin.ts';
import { registerAnalysisRoutes } from './routes/analyses.ts';
import { registerAssistantRoutes } from './routes/assistant.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerBillingRoutes } from './routes/billing.ts';
import { registerBuyRoutes } from './routes/buy.ts';
import { registerCatalogRoutes } from './routes/catalog.ts';
import { registerConnectionRoutes } from './routes/connections.ts';
import { registerDataRoutes } from './routes/data.ts';
import { registerEntityRoutes } from './routes/entities.ts';
import { registerEstimateRoutes } from './routes/estimate.ts';
import { registerExportRoutes } from './routes/export.ts';
import { registerKeyRoutes } from './routes/keys.ts';
import { registerLedgerRoutes } from './routes/ledger.ts';
import { registerManualRoutes } from './routes/manual.ts';
import { registerMeRoutes } from './routes/me.ts';
import { registerMetaRoutes } from './routes/meta.ts';
import { registerOAuthRoutes } from './routes/oauth.ts';
import { registerPriceRoutes } from './routes/prices.ts';
import { registerRecipeRoutes } from './routes/recipes.ts';
import { registerUsageSummaryRoutes } from './routes/usage-summary.ts';

export function registerRestRoutes(app: TypedApp, deps: Services): void {
  registerMetaRoutes(app, deps);
  registerAuthRoutes(app, deps);
  registerCatalogRoutes(app, deps);
  registerDataRoutes(app, deps);
  registerEstimateRoutes(app, deps);
  registerRecipeRoutes(app, deps);
  registerMeRoutes(app, deps);
  registerKeyRoutes(app, deps);
  registerConnectionRoutes(app, deps);
  registerOAuthRoutes(app, deps);
  registerExportRoutes(app, deps, app.openExports);
  registerBillingRoutes(app, deps);
  registerBuyRoutes(app, deps);
  registerAnalysisRoutes(app, deps);
  registerAssistantRoutes(app, deps);
  registerManualRoutes(app);
  registerAdminRoutes(app, deps);
  registerPriceRoutes(app, deps);
  registerLedgerRoutes(app, deps);
  registerUsageSummaryRoutes(app, deps);
  registerEntityRoutes(app, deps);
}
