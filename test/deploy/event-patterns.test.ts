/**
 * The EventBridge rules and the gear mover's event parser against the events
 * EC2 sends, as the EventBridge schema registry describes them
 * (support/event-patterns.ts): a rule that can never match, or a parser that
 * requires a field the real event does not carry, fails only on AWS, and
 * silently.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EC2_DETAIL_TYPES, EC2_EVENT_SOURCE, parseMessage } from '../../lib/messages/index.js';
import { eventDetail, eventPatternProblems } from './support/event-patterns.js';
import { loadPackagedStack, template, type Json } from './support/packaged-stack.js';

beforeAll(loadPackagedStack);

/** A value for each detail field EC2's events carry, as EC2 fills it. */
const SAMPLE: Record<string, string> = { 'instance-id': 'i-0123456789abcdef0', state: 'terminated', 'instance-action': 'terminate' };

describe('the EventBridge rules against the events AWS sends', () => {
  it('matches only events EC2 sends, on fields they carry', () => {
    const patterns = Object.values(template.Resources).flatMap((resource) => (resource.Type === 'AWS::Events::Rule' && resource.Properties.EventPattern) || []);
    expect(patterns.map((pattern) => pattern['detail-type'])).toEqual([[EC2_DETAIL_TYPES.stateChange], [EC2_DETAIL_TYPES.spotInterruption], [EC2_DETAIL_TYPES.rebalance]]);
    expect(eventPatternProblems(template)).toEqual([]);
  });

  it('names a pattern that would never match', () => {
    const broken = structuredClone(template) as Json;
    broken.Resources.Ec2StateChangeRule.Properties.EventPattern.detail = { State: ['terminated'] };
    broken.Resources.Ec2SpotInterruptionRule.Properties.EventPattern['detail-type'] = ['EC2 Spot Instance Interruption Notice'];
    broken.Resources.Ec2RebalanceRule.Properties.EventPattern = { detail: { 'instance-id': ['i-0123456789abcdef0'] } };
    const problems = eventPatternProblems(broken);
    expect(problems).toEqual([
      'Ec2StateChangeRule: detail.State: the event has no such field (it has instance-id, state)',
      expect.stringMatching(/^Ec2SpotInterruptionRule: aws\.ec2 sends no "EC2 Spot Instance Interruption Notice" \(it sends .*"EC2 Spot Instance Interruption Warning"/),
      'Ec2RebalanceRule: a pattern without source and detail-type matches every event of the account',
    ]);
  });

  it.each(Object.entries(EC2_DETAIL_TYPES))('parses a %s event carrying exactly the fields EC2 sends', (kind, detailType) => {
    const fields = eventDetail(EC2_EVENT_SOURCE, detailType);
    expect(fields, `${EC2_EVENT_SOURCE} sends "${detailType}"`).toBeDefined();
    const detail = Object.fromEntries(
      Object.entries(fields!)
        .filter(([, property]) => property.required)
        .map(([field]) => {
          expect(SAMPLE, `a sample value for ${field}`).toHaveProperty([field]);
          return [field, SAMPLE[field]];
        }),
    );
    const event = { version: '0', id: '7bf73129-1428-4cd3-a780-95db273d1602', 'detail-type': detailType, source: EC2_EVENT_SOURCE, account: '123456789012', time: '2026-11-30T12:00:00Z', region: 'us-east-1', resources: [], detail };
    const parsed = parseMessage(JSON.stringify(event));
    expect(parsed.ok ? parsed.message : parsed.error.message, kind).toMatchObject({ instanceId: 'i-0123456789abcdef0' });
  });
});
