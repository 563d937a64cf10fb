/**
 * Common code of the workspace's programs (gms-stacks.yaml lists lib/ as shared: a change here plans every stack).
 *
 * The name of the shared stack a team stack reads by StackReference: `organization/<project>/<stack>` on a DIY backend
 * (a bucket, a folder), `<org>/<project>/<stack>` on Pulumi Cloud. The team stack of `prod` reads the shared `prod`.
 */
export const SHARED_PROJECT = "gms-shared";

export function sharedStackName(stack: string, organization: string | undefined): string {
  return `${organization ?? "organization"}/${SHARED_PROJECT}/${stack}`;
}
