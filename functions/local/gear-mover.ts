/**
 * Local twin of functions/gear-mover.ts for `npm run invoke` (stage
 * `local` only; never deployed): the real handler, over the embedded local state.
 */
import { localHandler } from '../../lib/adapters/local/invoke.js';

export const handler = localHandler('gearMover', () => import('../gear-mover.js'));
