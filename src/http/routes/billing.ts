/** POST /api/v1/billing/checkout: not live (spec 1.1). It says so, and shows the package shapes. */
import { z } from 'zod';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { bodyCodes, edge, problems } from '../schemas.ts';

export function registerBillingRoutes(app: TypedApp, deps: Services): void {
  app.post(
    '/api/v1/billing/checkout',
    {
      schema: {
        operationId: 'checkout',
        tags: ['billing'],
        summary: 'Checkout for a package: not live (501 not_live, with the package shapes)',
        description:
          'Subscriptions are not live (subscriptions_live = false) and nothing is sold here. Billing is prepaid tokens; packages are assigned to accounts by an operator.',
        body: z
          .looseObject({ package: z.string().max(64).optional() })
          .nullish()
          .describe('Ignored: there is nothing to buy yet.'),
        response: { ...problems(...edge.optional, ...bodyCodes, 'not_live') },
      },
    },
    async () => {
      const howYouPay = deps.config.pricing.how_you_pay;
      throw new AppError(
        'not_live',
        'Checkout is not live: no package or subscription is sold yet (subscriptions_live = false). Billing is prepaid tokens; an operator assigns packages to accounts.',
        {
          subscriptions_live: howYouPay.subscriptions_live,
          method: howYouPay.method,
          workbench_public_price_published: howYouPay.workbench_public_price_published,
          packages: deps.config.pricing.commercial_skus,
        },
      );
    },
  );
}
