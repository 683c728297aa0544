import { DescribeLaunchTemplatesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { Ec2LaunchTemplateVersions } from '../../lib/adapters/ec2/launch-template-versions.js';
import { TransientError, ValidationError } from '../../lib/errors.js';
import { ec2Error } from '../support/fake-ec2.js';

describe('Ec2LaunchTemplateVersions (what $Latest and $Default stand for)', () => {
  const ec2 = mockClient(EC2Client);
  const versions = new Ec2LaunchTemplateVersions(new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, maxAttempts: 1 }));
  beforeEach(() => ec2.reset());
  afterAll(() => ec2.restore());

  it('asks for one template by id or by name and answers its latest and default version numbers as text', async () => {
    ec2
      .on(DescribeLaunchTemplatesCommand)
      .resolvesOnce({ LaunchTemplates: [{ LaunchTemplateId: 'lt-0abc', LaunchTemplateName: 'nodes', LatestVersionNumber: 7, DefaultVersionNumber: 3 }] })
      .resolvesOnce({ LaunchTemplates: [{ LaunchTemplateId: 'lt-0def', LaunchTemplateName: 'gpu', LatestVersionNumber: 2, DefaultVersionNumber: 2 }] });
    expect(await versions.versionsOf({ id: 'lt-0abc' })).toEqual({ latest: '7', default: '3' });
    expect(await versions.versionsOf({ name: 'gpu' })).toEqual({ latest: '2', default: '2' });
    expect(ec2.commandCalls(DescribeLaunchTemplatesCommand).map((call) => call.args[0].input)).toEqual([{ LaunchTemplateIds: ['lt-0abc'] }, { LaunchTemplateNames: ['gpu'] }]);
  });

  it('throttling is transient; access denied and an unknown template are validation errors naming the template', async () => {
    ec2.on(DescribeLaunchTemplatesCommand).rejects(ec2Error('RequestLimitExceeded', 503));
    await expect(versions.versionsOf({ id: 'lt-0abc' })).rejects.toBeInstanceOf(TransientError);
    ec2.reset();
    ec2.on(DescribeLaunchTemplatesCommand).rejects(ec2Error('UnauthorizedOperation', 403));
    const denied = await versions.versionsOf({ id: 'lt-0abc' }).catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(ValidationError);
    expect((denied as ValidationError).message).toContain('EC2 refused to describe lt-0abc');
    ec2.reset();
    ec2.on(DescribeLaunchTemplatesCommand).rejects(ec2Error('InvalidLaunchTemplateName.NotFoundException', 400));
    await expect(versions.versionsOf({ name: 'nodes' })).rejects.toBeInstanceOf(ValidationError);
    ec2.reset();
    ec2.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [] });
    await expect(versions.versionsOf({ name: 'nodes' })).rejects.toThrow('EC2 knows no launch template nodes');
  });
});
