/**
 * The prices the replay bills with: AWS on-demand list prices, us-east-1
 * (N. Virginia), Linux, as published on the pages named in SOURCES and read
 * on PRICES_AS_OF. They move rarely; when they do, change them here only.
 * An instance type not listed makes its pool's node cost 0 and says so.
 */
export const PRICES_AS_OF = '2026-11-01';
export const PRICE_REGION = 'us-east-1';

export const SOURCES = {
  ec2: 'https://aws.amazon.com/ec2/pricing/on-demand/',
  lambda: 'https://aws.amazon.com/lambda/pricing/',
  dynamodb: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  sqs: 'https://aws.amazon.com/sqs/pricing/',
  cloudwatch: 'https://aws.amazon.com/cloudwatch/pricing/',
  eventbridge: 'https://aws.amazon.com/eventbridge/pricing/',
} as const;

/** $ per instance-hour, on-demand, Linux. */
export const INSTANCE_PRICES: Readonly<Record<string, number>> = {
  't3.large': 0.0832,
  't3.xlarge': 0.1664,
  'm5.large': 0.096,
  'm5.xlarge': 0.192,
  'm5.2xlarge': 0.384,
  'm5.4xlarge': 0.768,
  'm6i.large': 0.096,
  'm6i.xlarge': 0.192,
  'm6i.2xlarge': 0.384,
  'm6i.4xlarge': 0.768,
  'm7i.xlarge': 0.2016,
  'm7i.2xlarge': 0.4032,
  'c5.xlarge': 0.17,
  'c5.2xlarge': 0.34,
  'c6i.xlarge': 0.17,
  'c6i.2xlarge': 0.34,
  'r5.xlarge': 0.252,
  'r5.2xlarge': 0.504,
  'r6i.xlarge': 0.252,
  'r6i.2xlarge': 0.504,
};

/** The serverless parts nodescaler itself runs on (free tiers ignored: a production account has spent them). */
export const SERVICE_PRICES = {
  /** Lambda, x86: per request and per GB-second of billed duration. */
  lambdaPerRequest: 0.2 / 1e6,
  lambdaPerGbSecond: 0.0000166667,
  /** DynamoDB on-demand: per write request unit (1 KB) and read request unit (4 KB strongly consistent, 2 eventually consistent). */
  dynamoPerWru: 0.625 / 1e6,
  dynamoPerRru: 0.125 / 1e6,
  /** SQS, per request (each 64 KB chunk of a payload is one request): standard and FIFO queues. */
  sqsStandardPerRequest: 0.4 / 1e6,
  sqsFifoPerRequest: 0.5 / 1e6,
  /** CloudWatch: a custom metric (one name and dimension set) per month, log ingestion per GB. */
  metricPerMonth: 0.3,
  logIngestPerGb: 0.5,
  /** EventBridge scheduled rules (the four one-minute ticks): no charge for scheduled events. */
  schedulePerInvocation: 0,
} as const;

/** $ per hour of one node of `instanceType`; undefined when the table does not know it. */
export function instancePrice(instanceType: string): number | undefined {
  return INSTANCE_PRICES[instanceType];
}
