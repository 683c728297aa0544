/**
 * The deployment's monitoring, offline: the alarms and the dashboard in the
 * template `serverless package` writes (once per test run:
 * support/packaged-stack.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PAGING_METRICS } from '../../lib/sim/alarms.js';
import { ALL_FUNCTIONS, loadPackagedStack, logicalId, ofType, resources, STAGE, type Json } from './support/packaged-stack.js';

beforeAll(loadPackagedStack);

describe('serverless package (offline): monitoring', () => {
  const alarms = () => ofType('AWS::CloudWatch::Alarm');
  const alarmTopic = { Ref: 'AlarmTopic' };

  it('alarms on any message in any dead-letter queue', () => {
    const dlqs = ofType('AWS::SQS::Queue').filter(([id]) => id.endsWith('DeadLetterQueue')).map(([id]) => id);
    expect(dlqs).toHaveLength(5);
    for (const dlq of dlqs) {
      const alarm = alarms().find(([, a]) => a.Properties.Dimensions?.some((d: Json) => logicalId(d.Value) === dlq));
      expect(alarm, dlq).toBeDefined();
      expect(alarm![1].Properties).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    }
  });

  it('alarms on capacity exhausted, aborted drains and lost gears (per pool), function errors and stats that stopped arriving; every alarm notifies the alarm topic', () => {
    const expressionOf = (id: string) => resources[id]!.Properties.Metrics?.[0]?.Expression as string;
    expect(expressionOf('CapacityExhaustedAlarm')).toMatch(/SUM\(CapacityExhausted\) FROM SCHEMA\("nodescaler", pool, service\) GROUP BY pool/);
    expect(expressionOf('DrainsAbortedAlarm')).toMatch(/SUM\(DrainsAborted\)/);
    expect(expressionOf('GearsLostAlarm')).toMatch(/SUM\(GearsLost\)/);
    // The bench's pages (lib/sim/alarms.ts) are these alarms: each of its metrics has one, per pool, on any point.
    for (const metric of PAGING_METRICS) {
      const alarm = alarms().find(([id]) => expressionOf(id)?.startsWith(`SELECT SUM(${metric}) FROM SCHEMA("nodescaler", pool, service) GROUP BY pool`));
      expect(alarm, metric).toBeDefined();
      expect(alarm![1].Properties).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1 });
      expect(alarm![1].Properties.Metrics[0].Period).toBe(300);
    }
    // Security: node-stats from a sender that may not report for the node (lib/app/stats-sender.ts counts StatsRejected).
    expect(expressionOf('StatsRejectedAlarm')).toBe('SELECT SUM(StatsRejected) FROM SCHEMA("nodescaler", reason, service)');
    expect(resources.StatsRejectedAlarm!.Properties).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
    // A spot pool's prices unread for an hour: every try of it failed (one each 10 minutes while failing).
    expect(expressionOf('SpotPricesUnreadAlarm')).toBe('SELECT SUM(SpotPriceReadFailures) FROM SCHEMA("nodescaler", pool, service) GROUP BY pool');
    expect(resources.SpotPricesUnreadAlarm!.Properties).toMatchObject({ Threshold: 5, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching', EvaluationPeriods: 1 });
    expect(resources.SpotPricesUnreadAlarm!.Properties.Metrics[0].Period).toBe(3600);
    // A pool's on-demand prices unread for an hour, likewise.
    expect(expressionOf('OnDemandPricesUnreadAlarm')).toBe('SELECT SUM(OnDemandPriceReadFailures) FROM SCHEMA("nodescaler", pool, service) GROUP BY pool');
    expect(resources.OnDemandPricesUnreadAlarm!.Properties).toMatchObject({ Threshold: 5, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching', EvaluationPeriods: 1 });
    expect(resources.OnDemandPricesUnreadAlarm!.Properties.Metrics[0].Period).toBe(3600);
    expect(expressionOf('DistrictUidsLowAlarm')).toBe('SELECT SUM(DistrictUidsLow) FROM SCHEMA("nodescaler", pool, service) GROUP BY pool');
    expect(resources.DistrictUidsLowAlarm!.Properties).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching', EvaluationPeriods: 1 });
    expect(resources.DistrictUidsLowAlarm!.Properties.Metrics[0].Period).toBe(900);
    // A launched node released for never joining its district: one of the bench's pages (PAGING_METRICS) too.
    expect(expressionOf('NodesNotJoiningAlarm')).toBe('SELECT SUM(ProvisionTimeouts) FROM SCHEMA("nodescaler", pool, service) GROUP BY pool');
    // The broker requires zones and a pool names no region: no node bought would place the refused gears.
    expect(expressionOf('ZonesUnnamedAlarm')).toBe('SELECT SUM(RefusedForZones) FROM SCHEMA("nodescaler", pool, service) GROUP BY pool');
    expect(resources.ZonesUnnamedAlarm!.Properties).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching', EvaluationPeriods: 1 });
    for (const name of ALL_FUNCTIONS) {
      const alarm = alarms().find(([, a]) => a.Properties.MetricName === 'Errors' && a.Properties.Dimensions[0].Value === `nodescaler-${STAGE}-${name}`);
      expect(alarm, name).toBeDefined();
    }
    expect(resources.StatsSilentAlarm!.Properties).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'NumberOfMessagesSent',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': ['StatsQueue', 'QueueName'] } }],
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
    expect(resources.AlarmTopic!.Type).toBe('AWS::SNS::Topic');
    for (const [id, alarm] of alarms()) expect(alarm.Properties.AlarmActions, id).toEqual([alarmTopic]);
  });

  it('has a dashboard: utilization and nodes per pool, actions, drains, errors, dead-letter depth, every alarm', () => {
    const [text, variables] = resources.Dashboard!.Properties.DashboardBody['Fn::Sub'] as [string, Record<string, string>];
    // Substitute what CloudFormation would, then the body must be valid dashboard JSON.
    const body = JSON.parse(
      text.replace(/\$\{([A-Za-z0-9:]+)(?:\.([A-Za-z]+))?\}/g, (_, name: string, attribute?: string) => variables[name] ?? (attribute ? `${name}-${attribute}` : name)),
    );
    const widgets: Json[] = body.widgets;
    const all = JSON.stringify(widgets);
    for (const metric of ['PoolUtilization', 'Nodes', 'ScaleUps', 'ScaleDowns', 'GearMoves', 'TenantRestarts', 'DrainDuration', 'DrainsAborted', 'DrainsCalledOff', 'DrainsOutgrown', 'NodesClosed', 'NodesReopened', 'GearsLost', 'CapacityExhausted', 'DecisionLatency', 'DistrictUidsLeft', 'NodesDueForRenewal']) {
      expect(all).toContain(`MetricName=\\"${metric}\\"`);
    }
    expect(all).toContain('"AWS/Lambda","Errors"');
    for (const dlq of ['Stats', 'Scale', 'Drain', 'Decommission', 'Events']) expect(all).toContain(`${dlq}DeadLetterQueue-QueueName`);
    const alarmWidget = widgets.find((w) => w.type === 'alarm');
    expect(alarmWidget.properties.alarms).toHaveLength(alarms().length);
  });

  it('shows the gears the broker refused (GearsRefused) next to utilization and nodes, and the hosts kept for gears beside it; no widget overlaps another', () => {
    const [text, variables] = resources.Dashboard!.Properties.DashboardBody['Fn::Sub'] as [string, Record<string, string>];
    const body = JSON.parse(text.replace(/\$\{([A-Za-z0-9:]+)(?:\.([A-Za-z]+))?\}/g, (_, name: string, attribute?: string) => variables[name] ?? (attribute ? `${name}-${attribute}` : name)));
    const widgets: Json[] = body.widgets;
    const searching = (metric: string) => widgets.filter((w) => JSON.stringify(w.properties.metrics ?? []).includes(`MetricName=\\"${metric}\\"`));
    const [refused] = searching('GearsRefused');
    expect(searching('GearsRefused')).toHaveLength(1);
    // Summed per 5 minutes over every pool's series, as the alarms read counts.
    expect(refused.properties).toMatchObject({ view: 'timeSeries', stat: 'Sum', period: 300 });
    expect(refused.properties.metrics).toEqual([[{ expression: `SEARCH('{nodescaler,pool,service} MetricName=\"GearsRefused\"', 'Sum', 300)`, id: 'refused', label: '' }]]);
    expect(refused.properties.title).toMatch(/refused/);
    // The row right under utilization and nodes: demand the pool did not meet, read with the load that caused it.
    const [utilization] = searching('PoolUtilization');
    expect(refused).toMatchObject({ x: utilization.x, y: utilization.y + utilization.height });
    const [kept] = searching('ReleasesHandedBack');
    expect(kept).toMatchObject({ y: refused.y, x: refused.x + refused.width });
    for (const metric of ['DecommissionRefused', 'OrphanHostsKept']) expect(searching(metric)).toEqual([kept]);
    // CloudWatch stacks overlapping widgets; every cell belongs to one widget at most.
    const cells = new Map<string, number>();
    widgets.forEach((w, i) => {
      for (let x = w.x; x < w.x + w.width; x++) for (let y = w.y; y < w.y + w.height; y++) {
        expect(cells.get(`${x},${y}`), `widgets ${cells.get(`${x},${y}`)} and ${i} overlap at ${x},${y}`).toBeUndefined();
        cells.set(`${x},${y}`, i);
      }
    });
    expect(widgets.every((w) => w.x + w.width <= 24)).toBe(true);
  });
});
