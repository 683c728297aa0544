/**
 * The broker adapter's SSM side: its two clients, and SSM's errors as ours
 * (configuration to fix, or transient).
 */
import { SSMClient } from '@aws-sdk/client-ssm';
import { NodescalerError, TransientError, ValidationError } from '../../errors.js';
import { awsClientConfig } from '../aws-clients.js';

/**
 * The broker adapter's two SSM clients: reads (GetCommandInvocation,
 * ListCommands) with the SDK's retries, and SendCommand retried only when
 * AWS throttled it (a command AWS may have taken is never sent twice by the
 * SDK; a move is looked up by its key before it is sent again).
 */
export function brokerSsmClients(region: string): { client: SSMClient; senderClient: SSMClient } {
  return { client: new SSMClient(awsClientConfig(region)), senderClient: new SSMClient(awsClientConfig(region, { retry: 'throttling-only' })) };
}

export function errorName(error: unknown): string {
  return typeof error === 'object' && error !== null && typeof (error as { name?: unknown }).name === 'string' ? (error as { name: string }).name : '';
}

const CONFIGURATION = new Set(['AccessDeniedException', 'InvalidDocument', 'InvalidParameters', 'InvalidDocumentVersion', 'UnsupportedPlatformType', 'InvalidRole']);

/** An SSM SDK error as one of ours; ours pass through. */
export function translateSsmError(error: unknown, call: string): NodescalerError {
  if (error instanceof NodescalerError) return error;
  const name = errorName(error) || 'Error';
  const message = error instanceof Error && error.message ? `${name}: ${error.message}` : name;
  if (CONFIGURATION.has(name)) return new ValidationError({ path: 'platform', message: `SSM ${call} refused (${message})` });
  if (name === 'InvalidInstanceId') {
    return new TransientError(`SSM ${call}: the broker host is not reachable by SSM (stopped, or its agent is offline): ${message}`, { cause: error });
  }
  return new TransientError(`SSM ${call} failed: ${message}`, { cause: error });
}
