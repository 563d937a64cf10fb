// Command examplegen converts the project's example programs, each written once as a Pulumi YAML program, into
// TypeScript, Python and Go with the program generators of github.com/pulumi/pulumi/pkg/v3, the release that
// scripts/pulumi-cli pins and whose SDK generators made the Python and Go SDKs (scripts/examples.mts runs it).
//
//	go run -trimpath . -schema <schema.json> -out <dir> <example dir>...    (from scripts/examplegen)
//
// For each example dir, which holds a Pulumi.yaml, it writes <dir>/<example>/typescript/index.ts,
// <dir>/<example>/python/__main__.py and <dir>/<example>/go/main.go, <example> being the dir's base name.
//
// The way there is YAML, then PCL, then each language. pulumi-yaml's own YAML-to-PCL converter (its codegen
// package) cannot be used: v1.25.0, the newest release the Go module proxy serves, is built against pkg/v3
// v3.206.0 and does not compile against v3.274.1 (its pulumiyaml package calls plugin APIs that have changed
// since). So this program parses the YAML with pulumi-yaml's ast package, which does compile, and writes the PCL
// itself (pcl.go), for the part of Pulumi YAML that examples use; anything else is refused by name.
//
// The output depends on the inputs and the pinned modules alone: the same inputs give byte-identical files.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	// A set of its own: pkg/v3's dependencies register logging flags on the global one.
	flags := flag.NewFlagSet("examplegen", flag.ExitOnError)
	schemaPath := flags.String("schema", "", "the package schema (schema.json)")
	out := flags.String("out", "", "the folder to write <example>/typescript, python and go into")
	_ = flags.Parse(os.Args[1:])
	if *schemaPath == "" || *out == "" || flags.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: examplegen -schema <schema.json> -out <dir> <example dir>...")
		flags.PrintDefaults()
		os.Exit(2)
	}
	loader, err := newSchemaLoader(*schemaPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "examplegen: %v\n", err)
		os.Exit(1)
	}
	for _, dir := range flags.Args() {
		name := filepath.Base(filepath.Clean(dir))
		files, warnings, err := convertExample(dir, loader)
		for _, warning := range warnings {
			fmt.Fprintf(os.Stderr, "examplegen: %s: warning: %s\n", name, warning)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "examplegen: %s: %v\n", name, err)
			os.Exit(1)
		}
		if err := writeFiles(filepath.Join(*out, name), files); err != nil {
			fmt.Fprintf(os.Stderr, "examplegen: %s: %v\n", name, err)
			os.Exit(1)
		}
	}
}

// writeFiles writes each file under dir by its slash-separated relative path.
func writeFiles(dir string, files map[string][]byte) error {
	for _, rel := range sortedKeys(files) {
		file := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, files[rel], 0o644); err != nil {
			return err
		}
	}
	return nil
}
