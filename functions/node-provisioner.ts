/** The deployed nodeProvisioner (serverless.yml): its handler over the AWS ports, built once per cold start. */
import { loadSettingsFromProcess } from '../lib/config/index.js';
import { nodeProvisionerHandler } from '../lib/handlers/node-provisioner.js';
import { awsNodeProvisioner } from '../lib/wiring/aws/node-provisioner.js';

export const handler = nodeProvisionerHandler(awsNodeProvisioner(loadSettingsFromProcess()));
