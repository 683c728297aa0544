import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { LaunchTemplateResolver, launchTemplateReadPatch } from '../../lib/app/launch-templates.js';
import { templateAtRead } from '../../lib/domain/drift.js';
import { TransientError } from '../../lib/errors.js';
import { ScriptedLaunchTemplates } from '../support/markets.js';

const template = (version: string, ref: { id?: string; name?: string } = { id: 'lt-0abc' }) => ({ launchTemplate: { ...ref, version } });

function resolver() {
  const clock = new VirtualClock('2026-11-30T10:00:00Z');
  const log = new MemoryLog();
  const ec2 = new ScriptedLaunchTemplates().set('lt-0abc', 7, 3).set('nodes', 4);
  return { clock, log, ec2, templates: new LaunchTemplateResolver(ec2, { clock, log }) };
}

describe('LaunchTemplateResolver: $Latest and $Default read as numbers', () => {
  it('replaces $Latest by the latest and $Default by the default version; a number or no launch template is left alone, unread', async () => {
    const { ec2, templates } = resolver();
    expect(await templates.resolve(template('$Latest'))).toEqual(template('7'));
    expect(await templates.resolve(template('$Default'))).toEqual(template('3'));
    expect(await templates.resolve(template('$Latest', { name: 'nodes' }))).toEqual(template('4', { name: 'nodes' }));
    expect(await templates.resolve(template('5'))).toEqual(template('5'));
    const byImage: { imageId: string; launchTemplate?: { version: string } } = { imageId: 'ami-1' };
    expect(await templates.resolve(byImage)).toBe(byImage);
    expect(ec2.requests).toEqual(['lt-0abc', 'nodes']);
  });

  it('reads a template once for 5 minutes, once for pools asking at the same time, and again after', async () => {
    const { clock, ec2, templates } = resolver();
    await Promise.all([templates.resolve(template('$Latest')), templates.resolve(template('$Default'))]);
    clock.advance(4 * 60_000);
    await templates.resolve(template('$Latest'));
    expect(ec2.requests).toEqual(['lt-0abc']);
    ec2.set('lt-0abc', 8);
    clock.advance(61_000);
    expect(await templates.resolve(template('$Latest'))).toEqual(template('8'));
    expect(ec2.requests).toEqual(['lt-0abc', 'lt-0abc']);
  });

  it('a failed read leaves the template as written (drift by version unknown), logged, keeps a good read it had, and is read again after a minute', async () => {
    const { clock, log, ec2, templates } = resolver();
    ec2.failNext(new TransientError('throttled'));
    expect(await templates.resolve(template('$Latest'))).toEqual(template('$Latest'));
    expect(log.lines.map((line) => line.message)).toContain('launch template versions not read; drift by template version unknown until they are');
    clock.advance(30_000);
    expect(await templates.resolve(template('$Latest'))).toEqual(template('$Latest'));
    expect(ec2.requests).toHaveLength(1);
    clock.advance(31_000);
    expect(await templates.resolve(template('$Latest'))).toEqual(template('7'));
    // Known, then a failed refresh: the last good read stands.
    clock.advance(5 * 60_000);
    ec2.failNext(new TransientError('throttled'));
    expect(await templates.resolve(template('$Latest'))).toEqual(template('7'));
    expect(ec2.requests).toHaveLength(3);
  });

  it('without the port (no launch template at $Latest, or not handler ec2) reads nothing', async () => {
    const clock = new VirtualClock('2026-11-30T10:00:00Z');
    expect(await new LaunchTemplateResolver(undefined, { clock, log: new MemoryLog() }).resolve(template('$Latest'))).toEqual(template('$Latest'));
  });
});

describe('the read kept on the pool record (launchTemplateRead), for the CLI', () => {
  const at = new Date('2026-11-30T10:00:00Z');
  it('is written when a symbolic version was read as a new number or for another template, and not again unchanged', () => {
    expect(launchTemplateReadPatch(template('$Latest'), template('7'), {}, at)).toEqual({ launchTemplateRead: { template: 'lt-0abc@$Latest', version: '7', readAt: at.toISOString() } });
    const kept = { launchTemplateRead: { template: 'lt-0abc@$Latest', version: '7', readAt: '2026-11-30T09:00:00.000Z' } };
    expect(launchTemplateReadPatch(template('$Latest'), template('7'), kept, at)).toEqual({});
    expect(launchTemplateReadPatch(template('$Default'), template('7'), kept, at)).toEqual({ launchTemplateRead: { template: 'lt-0abc@$Default', version: '7', readAt: at.toISOString() } });
    // Not read (failed) or pinned: nothing to keep.
    expect(launchTemplateReadPatch(template('$Latest'), template('$Latest'), {}, at)).toEqual({});
    expect(launchTemplateReadPatch(template('5'), template('5'), {}, at)).toEqual({});
  });

  it('is applied by templateAtRead only to the template it was read for', () => {
    const read = { template: 'lt-0abc@$Latest', version: '7' };
    expect(templateAtRead(template('$Latest'), read)).toEqual(template('7'));
    expect(templateAtRead(template('$Default'), read)).toEqual(template('$Default'));
    expect(templateAtRead(template('$Latest', { id: 'lt-0other' }), read)).toEqual(template('$Latest', { id: 'lt-0other' }));
    expect(templateAtRead(template('5'), read)).toEqual(template('5'));
    expect(templateAtRead(template('$Latest'), undefined)).toEqual(template('$Latest'));
  });
});
