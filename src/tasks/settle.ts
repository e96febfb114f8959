// A completed task's charge, settled once from the units its result reports, through the pipeline's one settlement
// (pipeline/settle.ts): units past what the model's limits allow are impossible, charged the reservation and logged.
import type { Charge } from '../billing/meter.js';
import { impossibleTaskUnits } from '../billing/usage-bounds.js';
import type { ModelRoute } from '../config/types.js';
import type { CallLog } from '../pipeline/call.js';
import { settleReported } from '../pipeline/settle.js';
import { mostUnitsOf, taskCostMicros, unitsOf } from './cost.js';
import type { TaskBill } from './family.js';

/**
 * Settles the task's charge from its result's mapped usage, read as its family's bill says (no units reported, or a family
 * a reload removed: the reservation), and answers the cost the task shows.
 */
export async function settleCompletedTask(charge: Charge, route: ModelRoute, bill: TaskBill | undefined, usage: unknown, size: string | undefined, log: CallLog): Promise<number> {
  const units = bill && unitsOf(bill, usage);
  const impossible = units && impossibleTaskUnits(route, units, mostUnitsOf(route, bill!));
  const billed = units && !impossible ? taskCostMicros(route, bill!, units, size) : undefined;
  const outcome =
    units === undefined ? await charge.settleReserved() : await settleReported(charge, route, log, impossible ? { impossible } : { costMicros: billed!, units: units.count, route });
  // Charged nothing (it had ended already: another process settled it): what it was settled at.
  return outcome.charged ? outcome.chargedMicros : Math.min(charge.ref.amountMicros, billed ?? charge.ref.amountMicros);
}
