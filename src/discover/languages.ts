/**
 * The languages `pulumi-gms discover --language` writes a program in: each one's Pulumi runtime, its program file,
 * and where the converter (./convert.ts) writes that file; and the converter's name. A module of its own, with no
 * imports, so that the command's flag check, and the release build that ships the converter, load nothing else.
 */

/** The converter's executable in a release's pulumi-gms tarball, beside pulumi-gms (scripts/dist/executables.mts). */
export const CONVERTER = "pulumi-gms-convert";
export const PROGRAM_LANGUAGES = {
  yaml: { runtime: "yaml", file: "Pulumi.yaml", generated: undefined },
  typescript: { runtime: "nodejs", file: "index.ts", generated: "typescript/index.ts" },
  python: { runtime: "python", file: "__main__.py", generated: "python/__main__.py" },
  // program.go declares the program; discover writes a main.go beside it that runs it (./go-program.ts).
  go: { runtime: "go", file: "program.go", generated: "go/main.go" },
} as const;

export type ProgramLanguage = keyof typeof PROGRAM_LANGUAGES;

export const isProgramLanguage = (name: string): name is ProgramLanguage => Object.hasOwn(PROGRAM_LANGUAGES, name);
