import { GetCallerIdentityCommand, type STSClient } from '@aws-sdk/client-sts';
import { TransientError, ValidationError } from '../../errors.js';
import type { Identity } from '../../ports/identity.js';
import { awsErrorInfo } from '../aws-errors.js';

/**
 * `Identity` from STS GetCallerIdentity: the ARN of the credentials the CLI
 * runs with (an assumed role's session ARN names the person behind it).
 * GetCallerIdentity needs no IAM permission. Asked once per command.
 * Throttling and network faults are `TransientError`; missing or refused
 * credentials are the SDK's own error, which the CLI explains.
 */
export class StsIdentity implements Identity {
  private arn: Promise<string> | undefined;

  constructor(private readonly client: STSClient) {}

  whoAmI(): Promise<string> {
    this.arn ??= this.ask();
    return this.arn;
  }

  private async ask(): Promise<string> {
    try {
      const result = await this.client.send(new GetCallerIdentityCommand({}));
      if (!result.Arn) throw new ValidationError({ path: 'Arn', message: 'STS GetCallerIdentity returned no ARN' });
      return result.Arn;
    } catch (error) {
      this.arn = undefined;
      if (error instanceof ValidationError) throw error;
      const info = awsErrorInfo(error);
      if (info.transient) throw new TransientError(`STS GetCallerIdentity: ${info.detail}`, { cause: error });
      // Missing or refused credentials: the CLI names those from the SDK's own error (and says what to set).
      throw error;
    }
  }
}
