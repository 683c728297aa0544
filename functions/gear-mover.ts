/** The deployed gearMover (serverless.yml): its handler over the AWS ports, built once per cold start. */
import { loadSettingsFromProcess } from '../lib/config/index.js';
import { gearMoverHandler } from '../lib/handlers/gear-mover.js';
import { awsGearMover } from '../lib/wiring/aws/gear-mover.js';

export const handler = gearMoverHandler(awsGearMover(loadSettingsFromProcess()));
