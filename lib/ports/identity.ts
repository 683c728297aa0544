/**
 * Who is acting: the operator behind a CLI command, for the audit entries of
 * the decision log. `whoAmI` resolves to a principal (an AWS ARN, or
 * `local user NAME` for the local state). Throws `TransientError` when the
 * identity service is throttled or unreachable; with no usable credentials
 * the adapter's own error. The CLI asks before it writes anything: an
 * action without a known author is not taken.
 */
export interface Identity {
  whoAmI(): Promise<string>;
}
