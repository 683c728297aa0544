import { userInfo } from 'node:os';
import type { Identity } from '../../ports/identity.js';

/** `Identity` of the local state: the operating-system user running the CLI. */
export class LocalUserIdentity implements Identity {
  constructor(private readonly name: () => string = () => userInfo().username) {}

  async whoAmI(): Promise<string> {
    return `local user ${this.name()}`;
  }
}
