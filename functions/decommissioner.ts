import middy from '@middy/core';
import type { ScheduledEvent, SQSEvent } from 'aws-lambda';
import { Decommissioner } from '../lib/app/decommission.js';
import { cloudFor, dnsFor, notifierFor } from '../lib/adapters/cloud/from-settings.js';
import { stateStoreFor } from '../lib/adapters/dynamodb/from-settings.js';
import { lambdaRuntime, messageParser, sqsBatch } from '../lib/adapters/lambda/runtime.js';
import { isScheduledEvent } from '../lib/adapters/lambda/scheduled.js';
import { injectedPorts } from '../lib/adapters/local/injection.js';
import { platformFor } from '../lib/adapters/platform/from-settings.js';
import { loadSettingsFromProcess } from '../lib/config/index.js';
import { systemClock } from '../lib/ports/clock.js';

const settings = loadSettingsFromProcess();
const local = injectedPorts();
const runtime = lambdaRuntime('decommissioner', settings);
const log = local.log ?? runtime.log;
const clock = local.clock ?? systemClock;
const dns = local.dns ?? dnsFor(settings);
const notifier = local.notifier ?? notifierFor(settings);
const decommissioner = new Decommissioner(
  {
    store: local.store ?? stateStoreFor(settings.deployment),
    cloud: local.cloud ?? cloudFor(settings, log),
    platform: local.platform ?? platformFor(settings, clock),
    clock,
    metrics: local.metrics ?? runtime.metrics,
    log,
    ...(dns ? { dns } : {}),
    ...(notifier ? { notifier } : {}),
    ...(local.sleep ? { sleep: local.sleep } : {}),
  },
  settings.config,
);
const parse = messageParser(['drain-complete'], clock);

/** Decommission queue batches (partial batch response) and the one-minute tick (volumes still attached, stranded drained nodes). */
export const handler = middy(async (event: SQSEvent | ScheduledEvent) => {
  if (isScheduledEvent(event)) return decommissioner.tick();
  return sqsBatch(event, decommissioner, parse, log);
}).use(runtime.observability);
