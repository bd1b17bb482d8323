import { setTimeout as delay } from 'node:timers/promises';
import { defineTool, type Tool } from '@ghost/core';
import Type from 'typebox';

/** What the shop's tools tell the server, for its log and for tests. */
export type ToolActivity =
  | { readonly tool: 'sales_report'; readonly status: 'started' | 'finished' | 'aborted' }
  | { readonly tool: 'refund_order'; readonly status: 'refunded'; readonly order: string };

/** How long the sales report takes when nobody stops it. */
const salesReportMs = 60_000;

/** A few orders the shop knows. */
const orders: Readonly<Record<string, { status: string; items: string[]; total: number }>> = {
  '1042': {
    status: 'shipped on 2 December, arriving 5 December',
    items: ['teapot', 'two cups'],
    total: 59.9,
  },
  '1043': { status: 'being packed', items: ['espresso grinder'], total: 129 },
};

/**
 * The shop's three tools: `lookup_order` answers at once, `sales_report` takes a minute (and stops
 * when its call is cancelled, as any slow tool should), and `refund_order` waits for a person's
 * approval. `report` hears what the slow and the approved tools do.
 */
export function createShopTools(report: (activity: ToolActivity) => void): Tool[] {
  const lookupOrder = defineTool({
    name: 'lookup_order',
    description: 'The status, items and total of one order, by its number.',
    input: Type.Object({ order: Type.String({ description: 'The order number, such as "1042".' }) }),
    execute: ({ order }) => {
      const found = orders[order];
      return found === undefined ? { order, status: 'unknown order' } : { order, ...found };
    },
  });
  const salesReport = defineTool({
    name: 'sales_report',
    description: "This quarter's sales by product. Slow: it takes about a minute.",
    input: Type.Object({ quarter: Type.String({ description: 'Such as "2026-Q4".' }) }),
    async execute({ quarter }, { signal }) {
      report({ tool: 'sales_report', status: 'started' });
      try {
        await delay(salesReportMs, undefined, { signal }); // rejects as soon as the call is cancelled
      } catch (error) {
        report({ tool: 'sales_report', status: 'aborted' });
        throw error;
      }
      report({ tool: 'sales_report', status: 'finished' });
      return { quarter, teapots: 412, cups: 1310, grinders: 57 };
    },
  });
  const refundOrder = defineTool({
    name: 'refund_order',
    description: 'Refunds an order to the card it was paid with. A person approves each refund.',
    input: Type.Object({ order: Type.String({ description: 'The order number.' }) }),
    needsApproval: true,
    execute: ({ order }) => {
      report({ tool: 'refund_order', status: 'refunded', order });
      return { order, refunded: orders[order]?.total ?? 0 };
    },
  });
  return [lookupOrder, salesReport, refundOrder];
}
