/**
 * Local twin of functions/decommissioner.ts for `npm run invoke` (stage
 * `local` only; never deployed): the real handler, over the embedded local state.
 */
import { localHandler } from '../../lib/adapters/local/invoke.js';

export const handler = localHandler('decommissioner', () => import('../decommissioner.js'));
