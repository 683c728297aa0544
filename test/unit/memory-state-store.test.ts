import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { stateStoreContract } from '../support/state-store-contract.js';

stateStoreContract('in-memory', { create: async () => new InMemoryStateStore() });
