import middy from '@middy/core';
import type { ScheduledEvent, SQSEvent } from 'aws-lambda';
import { NodeProvisioner } from '../lib/app/provision.js';
import { cloudFor, hostPorts } from '../lib/adapters/cloud/from-settings.js';
import { lambdaRuntime, messageParser, sqsBatch } from '../lib/adapters/lambda/runtime.js';
import { isScheduledEvent } from '../lib/adapters/lambda/scheduled.js';
import { injectedPorts } from '../lib/adapters/local/injection.js';
import { platformFor } from '../lib/adapters/platform/from-settings.js';
import { loadSettingsFromProcess } from '../lib/config/index.js';

const settings = loadSettingsFromProcess();
const local = injectedPorts();
const runtime = lambdaRuntime('nodeProvisioner', settings);
const ports = hostPorts(settings, local, runtime, cloudFor);
// The platform says whether a node past its provisioning time joined after all (holding gears) before its host is released.
const provisioner = new NodeProvisioner({ ...ports, platform: local.platform ?? platformFor(settings, ports.clock) }, settings.config);
const parse = messageParser(['scale-up'], ports.clock);

/** Scale queue batches (partial batch response) and the one-minute tick (timeouts, late host details, orphans). */
export const handler = middy(async (event: SQSEvent | ScheduledEvent) => {
  if (isScheduledEvent(event)) return provisioner.tick();
  return sqsBatch(event, provisioner, parse, ports.log);
}).use(runtime.observability);
