/**
 * Local twin of functions/node-provisioner.ts for `npm run invoke` (stage
 * `local` only; never deployed): the real handler, over the embedded local state (lib/wiring/local.ts).
 */
import { localHandler } from '../../lib/adapters/local/invoke.js';

export const handler = localHandler('nodeProvisioner');
