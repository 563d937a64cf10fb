/** The program test/testing/rate-limit.test.ts (LocalEngine) and test/pulumi-cli/rate-limit.test.ts (the real CLI) run under a rate limit. */

/** Fewer than the benchmark's 100 (test/bench/rate-limit.mts): at 5 requests a second, each operation takes about 4 s. */
export const RATE_LIMITED_APPS = 20;

/** `count` Apps with nothing between them: every create, read and delete may run at once. */
export const rateLimitedProgram = (count: number) => `import * as gms from "pulumi-gms";
for (let i = 0; i < ${count}; i++) new gms.App(\`app-\${i}\`, { name: \`rate limited \${i}\`, description: "rate" });
`;
