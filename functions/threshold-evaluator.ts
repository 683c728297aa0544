/** The deployed thresholdEvaluator (serverless.yml): its handler over the AWS ports, built once per cold start. */
import { loadSettingsFromProcess } from '../lib/config/index.js';
import { thresholdEvaluatorHandler } from '../lib/handlers/threshold-evaluator.js';
import { awsThresholdEvaluator } from '../lib/wiring/aws/threshold-evaluator.js';

export const handler = thresholdEvaluatorHandler(awsThresholdEvaluator(loadSettingsFromProcess()));
