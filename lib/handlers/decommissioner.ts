import middy from '@middy/core';
import type { Context, ScheduledEvent, SQSEvent } from 'aws-lambda';
import { Decommissioner, type DecommissionerPorts } from '../app/decommission.js';
import { messageParser, sqsBatch } from '../adapters/lambda/runtime.js';
import { functionEvent } from './event-shape.js';
import { startInvocation, withObservability, type HandlerDeps } from './deps.js';


const CONTRACT = { name: 'decommissioner', messages: ['drain-complete'] };
/** Decommission queue batches (partial batch response) and the one-minute tick (volumes still attached, stranded drained nodes). */
export function decommissionerHandler(deps: HandlerDeps<DecommissionerPorts>) {
  const decommissioner = new Decommissioner(deps.ports, deps.config);
  const parse = messageParser(['drain-complete'], deps.ports.clock);
  return withObservability(
    middy(async (raw: SQSEvent | ScheduledEvent, context?: Context) => {
      startInvocation(deps, context);
      const { kind, event } = functionEvent(raw, CONTRACT, deps.ports.log);
      if (kind === 'schedule') return decommissioner.tick();
      return sqsBatch(event, decommissioner, parse, deps.ports.log);
    }),
    deps,
  );
}
