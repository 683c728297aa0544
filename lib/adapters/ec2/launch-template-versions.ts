import { DescribeLaunchTemplatesCommand, EC2Client } from '@aws-sdk/client-ec2';
import type { Settings } from '../../config/index.js';
import { TransientError, ValidationError } from '../../errors.js';
import type { LaunchTemplateRef, LaunchTemplateVersions } from '../../ports/cloud.js';
import { priceReadClientConfig } from '../aws-clients.js';
import { awsErrorInfo } from '../aws-errors.js';

/**
 * `$Latest` and `$Default` of a pool's launch template: `DescribeLaunchTemplates`
 * by id or by name (one template a call: a name EC2 does not know fails the
 * whole request, so one pool's typo cannot hide another's versions). The only
 * EC2 action it needs is that one, which takes no resource-level permission.
 *
 * Contract: see `LaunchTemplateVersions`.
 */
export class Ec2LaunchTemplateVersions implements LaunchTemplateVersions {
  constructor(private readonly client: EC2Client) {}

  async versionsOf(template: LaunchTemplateRef): Promise<{ latest: string; default: string }> {
    const what = template.id ?? template.name ?? '?';
    let page;
    try {
      page = await this.client.send(new DescribeLaunchTemplatesCommand(template.id !== undefined ? { LaunchTemplateIds: [template.id] } : { LaunchTemplateNames: [template.name!] }));
    } catch (error) {
      const info = awsErrorInfo(error);
      if (!info.transient && info.clientFault) throw new ValidationError({ path: 'pools[].template.launchTemplate', message: `EC2 refused to describe ${what} (${info.detail})`, value: what }, 'DescribeLaunchTemplates');
      throw new TransientError(`DescribeLaunchTemplates of ${what} failed: ${info.detail}`, { cause: error });
    }
    const found = page.LaunchTemplates?.[0];
    if (found?.LatestVersionNumber === undefined || found.DefaultVersionNumber === undefined) {
      throw new ValidationError({ path: 'pools[].template.launchTemplate', message: `EC2 knows no launch template ${what}`, value: what }, 'DescribeLaunchTemplates');
    }
    return { latest: String(found.LatestVersionNumber), default: String(found.DefaultVersionNumber) };
  }
}

/** The version reader of a stage (with handler ec2 and a pool whose launch template version is `$Latest` or `$Default`: lib/config/adapters.ts). */
export function ec2LaunchTemplateVersionsFor(settings: Settings): Ec2LaunchTemplateVersions {
  return new Ec2LaunchTemplateVersions(new EC2Client(priceReadClientConfig(settings.deployment.region)));
}
