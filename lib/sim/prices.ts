/**
 * The prices the replay bills with: AWS on-demand list prices, us-east-1
 * (N. Virginia), Linux, as published on the pages named in SOURCES and read
 * on PRICES_AS_OF. They move rarely; when they do, change them here only.
 * An instance type not listed makes its pool's node cost 0 and says so.
 */
// The instances' list prices are also the pays-off check's (a node-hour's price), so they live in the domain.
export { INSTANCE_PRICES, PRICES_AS_OF, PRICE_REGION, instancePrice } from '../domain/node-price.js';

export const SOURCES = {
  ec2: 'https://aws.amazon.com/ec2/pricing/on-demand/',
  lambda: 'https://aws.amazon.com/lambda/pricing/',
  dynamodb: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  sqs: 'https://aws.amazon.com/sqs/pricing/',
  cloudwatch: 'https://aws.amazon.com/cloudwatch/pricing/',
  eventbridge: 'https://aws.amazon.com/eventbridge/pricing/',
} as const;

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
