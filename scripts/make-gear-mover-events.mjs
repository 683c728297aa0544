// Writes the gear mover's sample events: SQS events whose bodies are the
// messages in events/messages/ (a scale-down from the drain queue, EC2
// events as an EventBridge rule delivers them to the events queue).
// Usage: node scripts/make-gear-mover-events.mjs
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

const message = (name) => JSON.parse(readFileSync(`events/messages/${name}.json`, 'utf8'));
const arn = (queue) => `arn:aws:sqs:us-east-1:123456789012:nodescaler-dev-${queue}`;

function record(body, { queue, messageId, sent, fifo }) {
  const text = JSON.stringify(body);
  const attributes = {
    ApproximateReceiveCount: '1',
    SentTimestamp: String(sent),
    SenderId: fifo ? 'AROAEXAMPLE123456789:nodescaler-dev-thresholdEvaluator' : 'AIDAIEXAMPLEEVENTBRIDGE',
    ApproximateFirstReceiveTimestamp: String(sent + 35),
  };
  if (fifo) {
    attributes.SequenceNumber = '18887434958127346432';
    attributes.MessageGroupId = body.pool;
    attributes.MessageDeduplicationId = body.decisionId;
  }
  return {
    messageId,
    receiptHandle: `AQEB${createHash('sha256').update(messageId).digest('base64').slice(0, 40)}`,
    body: text,
    attributes,
    messageAttributes: {},
    md5OfBody: createHash('md5').update(text).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: arn(fifo ? `${queue}.fifo` : queue),
    awsRegion: 'us-east-1',
  };
}

const write = (file, records) => writeFileSync(`events/${file}`, `${JSON.stringify({ Records: records }, null, 2)}\n`);

const down = message('scale-down');
write('scale-down.json', [record(down, { queue: 'drain', messageId: '3f1c9e2a-7b45-4d0e-9a61-2c8d5e4f7a10', sent: Date.parse(down.decidedAt) + 180, fifo: true })]);

const spot = message('ec2-spot-interruption');
write('ec2-spot-interruption.json', [record(spot, { queue: 'events', messageId: '8d2e6f41-0c3b-4a9e-b7d5-61f0a2c4e893', sent: Date.parse(spot.time) + 900, fifo: false })]);

// The instance is terminated outside nodescaler (the sample message shows `running`; the gear mover acts on `terminated`).
const terminated = { ...message('ec2-state-change'), id: '4c8a1e5f-93d2-4b07-8e6a-0f2d7c9b5a31', time: '2026-03-01T14:31:07Z', detail: { 'instance-id': 'i-0abcd1234ef567890', state: 'terminated' } };
write('ec2-state-change.json', [record(terminated, { queue: 'events', messageId: 'b71f03d9-5e2c-4a86-9d14-7c3e8a0f6b52', sent: Date.parse(terminated.time) + 700, fifo: false })]);
