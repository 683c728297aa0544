import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
const arn = (q) => `arn:aws:sqs:us-east-1:123456789012:nodescaler-dev-${q}`;
let n = 0;
function record(body, queue) {
  n += 1;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const sent = Date.parse('2026-11-21T10:00:00Z') + n * 137;
  return {
    messageId: `${['6f2c1a0e','0b7d4e21','c3a95f18','91e0b7d2','5d48a3c6','e7f1029b','2a6c8e4d','b80d3f57','4c19e6a2','f3b27c85'][n % 10]}-${String(n).padStart(4,'0')}-4e3b-9c1a-7d5e2f8b6a${String(n).padStart(2,'0')}`,
    receiptHandle: `AQEB${createHash('sha256').update(String(n)).digest('base64').slice(0, 40)}`,
    body: text,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(sent),
      SenderId: 'AROAEXAMPLE123456789:i-0a1b2c3d4e5f60718',
      ApproximateFirstReceiveTimestamp: String(sent + 40),
    },
    messageAttributes: {},
    md5OfBody: createHash('md5').update(text).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: arn(queue),
    awsRegion: 'us-east-1',
  };
}
const stats = (i, profile, active, max, second, gears) => ({
  type: 'node-stats', v: 1, nodeId: `d1-${profile}-${i}.example.com`, district: 'd1', profile,
  activeGears: active, maxActiveGears: max, ...(gears ? { gears } : {}), cpu: 40 + i * 7.5, memory: 55 + i * 3.25,
  reportedAt: `2026-11-21T10:00:${String(second).padStart(2, '0')}Z`,
});
const gears = (node, count) => Array.from({ length: count }, (_, g) => ({ uuid: createHash('md5').update(`${node}-${g}`).digest('hex'), app: ['shop', 'blog', 'crm', 'wiki'][g % 4] + '-' + (g % 3), size: 'small' }));
const good = [
  stats(1, 'small', 94, 100, 3, gears(1, 94)),
  stats(2, 'small', 95, 100, 5),
  stats(3, 'small', 96, 100, 8),
  stats(4, 'small', 95, 100, 12),
  stats(1, 'medium', 12, 50, 15),
];
writeFileSync('events/node-stats.json', JSON.stringify({ Records: good.map((b) => record(b, 'stats')) }, null, 2) + '\n');
n = 20;
const bad = [
  record(stats(1, 'small', 70, 100, 20), 'stats'),
  record('{"type":"node-stats","v":1,"nodeId":"d1-small-2.example.com",', 'stats'),
  record({ ...stats(2, 'small', -3, 100, 21) }, 'stats'),
  record({ ...stats(3, 'small', 50, 100, 22), type: 'node-stat' }, 'stats'),
  record({ ...stats(4, 'small', 40.5, 100, 23) }, 'stats'),
  record({ ...stats(3, 'small', 60, 100, 24), reportedAt: '21/11/2026 10:00' }, 'stats'),
  record({ ...stats(5, 'small', 30, 100, 25), v: 2 }, 'stats'),
  record(stats(2, 'small', 65, 100, 26), 'stats'),
];
writeFileSync('events/bad-batch.json', JSON.stringify({ Records: bad }, null, 2) + '\n');
writeFileSync('events/tick.json', JSON.stringify({
  version: '0', id: '53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa', 'detail-type': 'Scheduled Event', source: 'aws.events',
  account: '123456789012', time: '2026-11-21T10:01:00Z', region: 'us-east-1',
  resources: ['arn:aws:events:us-east-1:123456789012:rule/nodescaler-dev-evaluator-tick'], detail: {},
}, null, 2) + '\n');

// The node provisioner's and the decommissioner's queues: the sample bodies of
// events/messages/, delivered the way Lambda delivers them (the scale queue is
// FIFO: group = pool, deduplication id = decisionId).
const readMessage = (name) => JSON.parse(readFileSync(`events/messages/${name}`, 'utf8'));
n = 40;
const scaleUp = readMessage('scale-up.json');
const scaleRecord = record(scaleUp, 'scale.fifo');
Object.assign(scaleRecord.attributes, {
  MessageGroupId: scaleUp.pool,
  MessageDeduplicationId: scaleUp.decisionId,
  SequenceNumber: '18893571264728101376',
});
writeFileSync('events/scale-up.json', JSON.stringify({ Records: [scaleRecord] }, null, 2) + '\n');
n = 50;
writeFileSync('events/drain-complete.json', JSON.stringify({ Records: [record(readMessage('drain-complete.json'), 'decommission')] }, null, 2) + '\n');
