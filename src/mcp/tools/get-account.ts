/** get_account: the caller's credential, wallet, tier and limits, as GET /api/v1/me. Free. */
import { z } from 'zod';
import type { Accounts } from '../../domain/accounts.ts';
import { accountOut, presentAccount } from '../../views/accounts.ts';
import { defineTool, type McpTool, text } from '../tool-kit.ts';

export function getAccountTool(accounts: Accounts): McpTool {
  return defineTool({
    name: 'get_account',
    title: 'Your account',
    description:
      'Your credential, wallet balance, loyalty tier, tokens burned this month, next tier and limits (per minute, per day, concurrent): the same as GET /api/v1/me. Free: burns no tokens. REST and MCP share one budget per key.',
    metered: false,
    input: z.strictObject({}),
    output: accountOut,
    async run(_args, context) {
      const me = presentAccount(await accounts.snapshot(context.caller));
      const next = me.next_tier
        ? `; next tier ${me.next_tier.level} in ${me.next_tier.tokens_needed} tokens`
        : '';
      const perDay = me.limits.per_day === null ? 'no daily limit' : `${me.limits.per_day}/day`;
      return {
        content: [
          text(
            `${me.credential.kind} credential. Balance ${me.wallet.balance} tokens; burned ${me.burned_this_month} this month; tier ${me.tier.level} ${me.tier.name} (${me.tier.discount_pct} % discount)${next}. Limits: ${me.limits.per_minute}/min, ${perDay}, ${me.limits.concurrent} concurrent.`,
          ),
        ],
        structuredContent: me,
      };
    },
  });
}
