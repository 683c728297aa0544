/**
 * Which configuration file a deployed stage uses. Images, subnets, security
 * groups and the broker instance are regional, so a stage deployed to a second
 * region needs its own file: `config/<stage>.<region>.yml` when it exists, else
 * `config/<stage>.yml`. scripts/sls.mjs applies the same rule when it packages.
 */
export function stageConfigFile(stage: string, region: string | undefined, exists: (path: string) => boolean): string {
  const regional = region === undefined ? undefined : `config/${stage}.${region}.yml`;
  return regional !== undefined && exists(regional) ? regional : `config/${stage}.yml`;
}
