/**
 * A Go program as the converter writes it, a main.go whose whole program is the function `main` gives to
 * `pulumi.Run`, made into a function of its own that `pulumi.Run` or an Automation API driver
 * (`auto.UpsertStackInlineSource`) takes. discover writes it as program.go, with a main.go that runs it on the Go
 * language host (GO_MAIN), so that docs/go.md's driver, a main.go of its own, can take that file's place; the
 * examples' test driver compiles each example's program in the same way.
 */

/** The only shape of main.go the converter writes: the whole program is the function given to pulumi.Run. */
const GO_HEADER = "package main\n";
const GO_MAIN_OPENING = "\nfunc main() {\n\tpulumi.Run(func(ctx *pulumi.Context) error {\n";
const GO_MAIN_CLOSING = "\n\t})\n}\n";

/**
 * The generated main.go as package `packageName`, declaring `func <functionName>(ctx *pulumi.Context) error` (with
 * `comment` above it) as the function main gave to `pulumi.Run`. Only the package clause and main's wrapping lines
 * change, line for line, so that a compile error names the line of main.go. Throws, saying what it expected, on a
 * file of any other shape.
 */
export function goRunFunction(source: string, packageName: string, functionName: string, comment: string): string {
  if (!/^[a-z][a-z0-9_]*$/.test(packageName)) throw new Error(`${JSON.stringify(packageName)} is not a Go package name`);
  const shape =
    `a generated main.go is \`${GO_HEADER.trim()}\`, its imports, ` +
    "then `func main() { pulumi.Run(func(ctx *pulumi.Context) error { ... }) }` and nothing after it";
  const opening = source.indexOf(GO_MAIN_OPENING);
  if (!source.startsWith(GO_HEADER)) throw new Error(`no \`${GO_HEADER.trim()}\` on the first line: ${shape}`);
  if (opening < 0 || source.indexOf(GO_MAIN_OPENING, opening + 1) >= 0)
    throw new Error(`not exactly one main that calls pulumi.Run with a literal function: ${shape}`);
  if (!source.endsWith(GO_MAIN_CLOSING)) throw new Error(`the file does not end with main's \`})\` and \`}\`: ${shape}`);
  const body = source.slice(opening + GO_MAIN_OPENING.length, source.length - GO_MAIN_CLOSING.length);
  if (/\nfunc /.test(source.slice(0, opening)) || /^func /m.test(body)) throw new Error(`a function declared beside main: ${shape}`);
  return [
    `package ${packageName}\n`,
    source.slice(GO_HEADER.length, opening),
    `\n// ${comment}\n`,
    `func ${functionName}(ctx *pulumi.Context) error {\n`,
    body,
    "\n}\n",
  ].join("");
}

/** The function discover's program.go declares, which main.go (GO_MAIN) or docs/go.md's driver runs. */
export const GO_PROGRAM_FUNCTION = "program";

/** The main.go beside program.go: `pulumi up` runs it on the Go language host. */
export const GO_MAIN = `package main

import "github.com/pulumi/pulumi/sdk/v3/go/pulumi"

// main runs the program (program.go) on the Go language host, as \`pulumi up\` does. Without the host, docs/go.md's
// Automation API driver, a main.go of its own, takes this file's place.
func main() {
\tpulumi.Run(${GO_PROGRAM_FUNCTION})
}
`;
