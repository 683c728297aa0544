import middy from '@middy/core';
import type { ScheduledEvent, SQSEvent } from 'aws-lambda';
import { Decommissioner, type DecommissionerPorts } from '../app/decommission.js';
import { messageParser, sqsBatch } from '../adapters/lambda/runtime.js';
import { isScheduledEvent } from '../adapters/lambda/scheduled.js';
import { withObservability, type HandlerDeps } from './deps.js';

/** Decommission queue batches (partial batch response) and the one-minute tick (volumes still attached, stranded drained nodes). */
export function decommissionerHandler(deps: HandlerDeps<DecommissionerPorts>) {
  const decommissioner = new Decommissioner(deps.ports, deps.config);
  const parse = messageParser(['drain-complete'], deps.ports.clock);
  return withObservability(
    middy(async (event: SQSEvent | ScheduledEvent) => {
      if (isScheduledEvent(event)) return decommissioner.tick();
      return sqsBatch(event, decommissioner, parse, deps.ports.log);
    }),
    deps,
  );
}
