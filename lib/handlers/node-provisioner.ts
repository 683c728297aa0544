import middy from '@middy/core';
import type { Context, ScheduledEvent, SQSEvent } from 'aws-lambda';
import { NodeProvisioner } from '../app/provision.js';
import { messageParser, sqsBatch } from '../adapters/lambda/runtime.js';
import type { ProvisionerPorts } from '../workflows/launch/context.js';
import { functionEvent } from './event-shape.js';
import { startInvocation, withObservability, type HandlerDeps } from './deps.js';


const CONTRACT = { name: 'nodeProvisioner', messages: ['scale-up'] };
/** Scale queue batches (partial batch response) and the one-minute tick (timeouts, late host details, orphans). */
export function nodeProvisionerHandler(deps: HandlerDeps<ProvisionerPorts>) {
  const provisioner = new NodeProvisioner(deps.ports, deps.config);
  const parse = messageParser(['scale-up'], deps.ports.clock);
  return withObservability(
    middy(async (raw: SQSEvent | ScheduledEvent, context?: Context) => {
      startInvocation(deps, context);
      const { kind, event } = functionEvent(raw, CONTRACT, deps.ports.log);
      if (kind === 'schedule') return provisioner.tick();
      return sqsBatch(event, provisioner, parse, deps.ports.log);
    }),
    deps,
  );
}
