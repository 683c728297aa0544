import middy from '@middy/core';
import type { ScheduledEvent, SQSEvent } from 'aws-lambda';
import { Decommissioner } from '../lib/app/decommission.js';
import { hostPorts, releasingCloudFor } from '../lib/adapters/cloud/from-settings.js';
import { lambdaRuntime, messageParser, sqsBatch } from '../lib/adapters/lambda/runtime.js';
import { isScheduledEvent } from '../lib/adapters/lambda/scheduled.js';
import { injectedPorts } from '../lib/adapters/local/injection.js';
import { platformFor } from '../lib/adapters/platform/from-settings.js';
import { loadSettingsFromProcess } from '../lib/config/index.js';

const settings = loadSettingsFromProcess();
const local = injectedPorts();
const runtime = lambdaRuntime('decommissioner', settings);
const ports = hostPorts(settings, local, runtime, releasingCloudFor);
const decommissioner = new Decommissioner({ ...ports, platform: local.platform ?? platformFor(settings, ports.clock) }, settings.config);
const parse = messageParser(['drain-complete'], ports.clock);

/** Decommission queue batches (partial batch response) and the one-minute tick (volumes still attached, stranded drained nodes). */
export const handler = middy(async (event: SQSEvent | ScheduledEvent) => {
  if (isScheduledEvent(event)) return decommissioner.tick();
  return sqsBatch(event, decommissioner, parse, ports.log);
}).use(runtime.observability);
