/** The deployed decommissioner (serverless.yml): its handler over the AWS ports, built once per cold start. */
import { loadSettingsFromProcess } from '../lib/config/index.js';
import { decommissionerHandler } from '../lib/handlers/decommissioner.js';
import { awsDecommissioner } from '../lib/wiring/aws/decommissioner.js';

export const handler = decommissionerHandler(awsDecommissioner(loadSettingsFromProcess()));
