import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Config, Settings } from '../../config/index.js';
import { NodescalerError, TransientError, ValidationError } from '../../errors.js';
import type { HostInfo, HostSpec, ReleaseSpec } from '../../ports/cloud.js';
import { awsClientConfig } from '../aws-clients.js';
import { awsErrorInfo } from '../aws-errors.js';
import { RequestOnlyCloud, addNodeRequest, removeNodeRequest, type AddNodeRequest, type RemoveNodeRequest } from '../cloud/host-request.js';

export interface SpoolOptions {
  bucket: string;
  /** Key prefix; each pool writes under `<prefix><district>/<profile>/`. */
  prefix: string;
}

/**
 * Handler `spool`: writes each event specification as a JSON document to S3
 * for an external system to act on, at
 * `<prefix><district>/<profile>/<hostName>.add.json` (and `.remove.json`
 * when the host may go). One key per host and kind, so a retry overwrites
 * the same document. Creates no instance.
 *
 * Errors: throttling (`SlowDown`), 5xx, network -> `TransientError`; a
 * missing bucket or denied access -> `ValidationError`.
 */
export class S3SpoolCloud extends RequestOnlyCloud {
  constructor(
    private readonly client: S3Client,
    private readonly options: SpoolOptions,
    private readonly config: Pick<Config, 'pools'>,
  ) {
    super();
  }

  async createHost(spec: HostSpec): Promise<HostInfo> {
    await this.put(addNodeRequest(this.config, spec));
    const info: HostInfo = { state: 'requested' };
    if (spec.offering?.instanceType !== undefined) info.instanceType = spec.offering.instanceType;
    return info;
  }

  async reportRelease(spec: ReleaseSpec): Promise<void> {
    await this.put(removeNodeRequest(spec));
  }

  /** Key of a request document. */
  keyOf(request: Pick<AddNodeRequest | RemoveNodeRequest, 'kind' | 'district' | 'profile' | 'hostName'>): string {
    const kind = request.kind === 'add-node' ? 'add' : 'remove';
    return `${this.options.prefix}${request.district}/${request.profile}/${request.hostName}.${kind}.json`;
  }

  private async put(request: AddNodeRequest | RemoveNodeRequest): Promise<void> {
    const key = this.keyOf(request);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.options.bucket,
          Key: key,
          Body: `${JSON.stringify(request, null, 2)}\n`,
          ContentType: 'application/json',
        }),
      );
    } catch (error) {
      throw translateS3Error(error, `PutObject s3://${this.options.bucket}/${key}`);
    }
  }
}

export function translateS3Error(error: unknown, operation: string): NodescalerError {
  if (error instanceof NodescalerError) return error;
  const info = awsErrorInfo(error);
  if (info.transient) return new TransientError(`${operation} failed: ${info.detail}`, { cause: error });
  if (info.name === 'NoSuchBucket') return new ValidationError({ path: 'spool.bucket', message: `S3 has no such bucket (${info.detail})` }, operation);
  if (info.clientFault) return new ValidationError({ path: '', message: `S3 rejected the request (${info.detail})` }, operation);
  return new TransientError(`${operation} failed: ${info.detail}`, { cause: error });
}

/** The `spool` handler's cloud for a stage (the client is built here: see ec2CloudFor). */
export function s3SpoolCloudFor(settings: Settings): S3SpoolCloud {
  const { config, deployment } = settings;
  if (!config.spool) throw new ValidationError({ path: 'spool.bucket', message: 'handler spool needs spool.bucket' }, 'configuration');
  return new S3SpoolCloud(new S3Client(awsClientConfig(deployment.region, { retry: 'caller' })), config.spool, config);
}
