/** The IAM action each AWS SDK command needs, and the commands a source file imports. */

/** IAM's service prefix for each SDK package. */
const SERVICE: Record<string, string> = {
  'client-dynamodb': 'dynamodb',
  'lib-dynamodb': 'dynamodb',
  'client-ec2': 'ec2',
  'client-pricing': 'pricing',
  'client-route-53': 'route53',
  'client-s3': 's3',
  'client-sns': 'sns',
  'client-sqs': 'sqs',
  'client-ssm': 'ssm',
  'client-sts': 'sts',
};
/** Commands whose IAM action is not `<service>:<name without Command>`. */
const ACTION_OF: Record<string, string | null> = {
  'lib-dynamodb/BatchGetCommand': 'dynamodb:BatchGetItem',
  'lib-dynamodb/BatchWriteCommand': 'dynamodb:BatchWriteItem',
  'lib-dynamodb/DeleteCommand': 'dynamodb:DeleteItem',
  'lib-dynamodb/GetCommand': 'dynamodb:GetItem',
  'lib-dynamodb/PutCommand': 'dynamodb:PutItem',
  'lib-dynamodb/QueryCommand': 'dynamodb:Query',
  'lib-dynamodb/ScanCommand': 'dynamodb:Scan',
  'lib-dynamodb/UpdateCommand': 'dynamodb:UpdateItem',
  'client-sqs/SendMessageBatchCommand': 'sqs:SendMessage',
  'client-sqs/DeleteMessageBatchCommand': 'sqs:DeleteMessage',
  'client-sqs/ChangeMessageVisibilityBatchCommand': 'sqs:ChangeMessageVisibility',
  // Who am I needs no permission.
  'client-sts/GetCallerIdentityCommand': null,
};

export function actionOf(pkg: string, command: string): string | null {
  const key = `${pkg}/${command}`;
  if (key in ACTION_OF) return ACTION_OF[key]!;
  // The document client's names are not DynamoDB's (Get is GetItem; a transaction needs each item action it holds).
  if (pkg === 'lib-dynamodb') throw new Error(`no IAM action known for ${key}: add it to ACTION_OF`);
  const service = SERVICE[pkg];
  if (!service) throw new Error(`no IAM service known for @aws-sdk/${pkg}`);
  return `${service}:${command.replace(/Command$/, '')}`;
}

/** `import { XCommand, ... } from '@aws-sdk/<pkg>'` of one source file, as [pkg, command] pairs. */
export function commandsImported(source: string): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  for (const match of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'@aws-sdk\/([a-z0-9-]+)'/g)) {
    for (const name of match[1]!.split(',').map((part) => part.trim())) {
      if (/^[A-Z]\w*Command$/.test(name)) found.push([match[2]!, name]);
    }
  }
  return found;
}
