// What ec2:RunInstances may use, from the stage's configuration file
// (serverless.yml custom.scopes.launch), and whether the evaluator reads spot
// prices (`spotPrices`: a spot pool launched by handler ec2) and on-demand
// prices (`onDemandPrices`: handler ec2): the images, subnets, security groups
// and launch templates its pools name, as IAM resource ARNs, so the
// provisioner's role cannot launch from any other image or into any other
// subnet. The file is read raw here (the packaging validates it with
// lib/config/parse.ts: see infra/esbuild-plugins.cjs); a pool that leaves a
// choice to its launch template (no imageId, no security groups) widens that
// one resource type to the ones the template may hold, which only an
// operator can create.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { parse } = require('yaml');

const arn = (account, type, id) => ({ 'Fn::Sub': `arn:\${AWS::Partition}:ec2:\${AWS::Region}:${account ? '${AWS::AccountId}' : ''}:${type}/${id}` });

/** The launch scopes of one configuration (parsed YAML). */
function launchScopes(config) {
  const pools = Array.isArray(config?.pools) ? config.pools : [];
  const templates = pools.map((pool) => (pool && typeof pool.template === 'object' && pool.template) || {});
  const unique = (values) => [...new Set(values.filter((v) => typeof v === 'string' && v !== ''))].sort();
  const images = unique(templates.map((t) => t.imageId));
  const subnets = unique(templates.flatMap((t) => (Array.isArray(t.subnets) ? t.subnets : [])));
  const groups = unique(templates.flatMap((t) => (Array.isArray(t.securityGroups) ? t.securityGroups : [])));
  const launchTemplates = unique(templates.map((t) => t.launchTemplate?.id));
  const byName = templates.some((t) => t.launchTemplate && t.launchTemplate.id === undefined);
  const fromTemplate = (pick) => templates.some((t) => t.launchTemplate && pick(t));
  const inputs = [
    ...(fromTemplate((t) => t.imageId === undefined) ? [arn(false, 'image', '*')] : images.map((id) => arn(false, 'image', id))),
    ...subnets.map((id) => arn(true, 'subnet', id)),
    ...(fromTemplate((t) => !Array.isArray(t.securityGroups) || t.securityGroups.length === 0) ? [arn(true, 'security-group', '*')] : groups.map((id) => arn(true, 'security-group', id))),
    ...(byName ? [arn(true, 'launch-template', '*')] : launchTemplates.map((id) => arn(true, 'launch-template', id))),
  ];
  const launches = config?.handler === 'ec2' && images.length + launchTemplates.length + (byName ? 1 : 0) > 0 && subnets.length > 0;
  // The evaluator reads spot prices (ec2:DescribeSpotPriceHistory) by the same rule as lib/config/adapters.ts spotPrices.
  const spotPrices = config?.handler === 'ec2' && templates.some((t) => t.spot === true);
  // The evaluator reads on-demand prices (pricing:GetProducts) by the same rule as lib/config/adapters.ts onDemandPrices.
  const onDemandPrices = config?.handler === 'ec2';
  // The evaluator reads launch template versions (ec2:DescribeLaunchTemplates) by the same rule as lib/config/adapters.ts launchTemplateVersions.
  const launchTemplateVersions = config?.handler === 'ec2' && templates.some((t) => t.launchTemplate && (t.launchTemplate.version === undefined || String(t.launchTemplate.version).startsWith('$')));
  return {
    enabled: launches ? 'true' : '',
    spotPrices: spotPrices ? 'true' : '',
    onDemandPrices: onDemandPrices ? 'true' : '',
    launchTemplateVersions: launchTemplateVersions ? 'true' : '',
    inputs: launches ? inputs : [arn(false, 'image', 'none')],
  };
}

/** serverless.yml: `${file(infra/launch-scopes.cjs):launch}`, resolved with the stage's configuration file. */
module.exports = async ({ resolveVariable }) => {
  const file = await resolveVariable('param:configFile');
  const text = fs.readFileSync(path.resolve(__dirname, '..', file), 'utf8');
  return { launch: launchScopes(parse(text)) };
};
module.exports.launchScopes = launchScopes;
