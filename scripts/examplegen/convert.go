package main

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/hcl2/syntax"
	nodejsgen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	pygen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
)

// language is one target: the generator, the file of the program it writes, where that file goes in the
// example's output, and a mechanical rewrite of the file, if any.
type language struct {
	name     string
	generate func(*pcl.Program) (map[string][]byte, hcl.Diagnostics, error)
	file     string
	out      string
	rewrite  func([]byte) ([]byte, error)
}

var languages = []language{
	{"typescript", nodejsgen.GenerateProgram, "index.ts", "typescript/index.ts", useNativeNamespace},
	{"python", pygen.GenerateProgram, "__main__.py", "python/__main__.py", indexListItems},
	{"go", gogen.GenerateProgram, "main.go", "go/main.go", nil},
}

// convertExample converts the Pulumi YAML program in dir into each language. It returns the files by their path
// under the example's output folder, and the warnings of conversion; an error diagnostic fails it.
func convertExample(dir string, loader *schemaLoader) (map[string][]byte, []string, error) {
	text, err := yamlProgramToPCL(dir, loader.name)
	if err != nil {
		return nil, nil, err
	}
	files := map[string][]byte{}
	var warnings []string
	for _, lang := range languages {
		// Each generator gets a program bound afresh: generators annotate the program and its package.
		program, diags, err := bindPCL(text, loader)
		warnings = append(warnings, warningsOf(diags)...)
		if err != nil {
			return nil, warnings, err
		}
		generated, diags, err := lang.generate(program)
		warnings = append(warnings, prefixed(lang.name, warningsOf(diags))...)
		if err != nil {
			return nil, warnings, fmt.Errorf("generating %s: %w", lang.name, err)
		}
		if diags.HasErrors() {
			return nil, warnings, fmt.Errorf("generating %s: %s", lang.name, errorsOf(diags))
		}
		source, ok := generated[lang.file]
		if !ok {
			return nil, warnings, fmt.Errorf("the %s generator wrote no %s (it wrote %s)",
				lang.name, lang.file, strings.Join(sortedKeys(generated), ", "))
		}
		if lang.rewrite != nil {
			if source, err = lang.rewrite(source); err != nil {
				return nil, warnings, fmt.Errorf("%s: %w", lang.name, err)
			}
		}
		files[lang.out] = source
	}
	// Every language binds the same program and reports the same binding warnings: keep one of each.
	return files, unique(warnings), nil
}

// bindPCL parses and binds the program against the schema, strictly: a property, type or function the package
// lacks is an error, as it would be when the example runs.
func bindPCL(text string, loader *schemaLoader) (*pcl.Program, hcl.Diagnostics, error) {
	parser := syntax.NewParser()
	if err := parser.ParseFile(strings.NewReader(text), "program.pp"); err != nil {
		return nil, nil, err
	}
	if parser.Diagnostics.HasErrors() {
		return nil, parser.Diagnostics, fmt.Errorf("the PCL written for it does not parse: %s\n%s", errorsOf(parser.Diagnostics), text)
	}
	program, diags, err := pcl.BindProgram(parser.Files, loader)
	if diags.HasErrors() {
		return nil, diags, fmt.Errorf("%s\nin the PCL written for it:\n%s", errorsOf(diags), text)
	}
	if err != nil {
		return nil, diags, err
	}
	return program, diags, nil
}

// tsImportLine is the import the Node.js generator writes for the package, by schema.json's
// language.nodejs.packageName; the npm package's classes for the plugin are under its `native` namespace.
const (
	tsImportLine = `import * as gms from "pulumi-gms";`
	tsNativeLine = `import { native as gms } from "pulumi-gms";`
)

// useNativeNamespace rewrites the one import line of the package so that `gms.X` names the native namespace's
// X, which has every resource class and lookup function under the generator's names. Nothing else changes. A
// program that imports the package in any other way means the generator has changed: that is an error, to be
// looked at rather than rewritten by guess.
func useNativeNamespace(source []byte) ([]byte, error) {
	lines := bytes.Split(source, []byte("\n"))
	found := 0
	for i, line := range lines {
		switch {
		case string(line) == tsImportLine:
			lines[i] = []byte(tsNativeLine)
			found++
		case bytes.Contains(line, []byte(`"pulumi-gms"`)):
			return nil, fmt.Errorf("the generator imports pulumi-gms as %q, not %q", line, tsImportLine)
		}
	}
	if found > 1 {
		return nil, fmt.Errorf("the generator imports pulumi-gms %d times", found)
	}
	return bytes.Join(lines, []byte("\n")), nil
}

// pythonFunctionResult matches a variable the Python generator assigns a package function's result to.
var pythonFunctionResult = regexp.MustCompile(`(?m)^([a-z_][a-z0-9_]*) = gms\.get_[a-z0-9_]+\(`)

// indexListItems rewrites the Python generator's attribute access on an item of a function's list result,
// `records[0].guid`, as the key access that item allows, `records[0]["guid"]`: the Python SDK returns a function
// whose result is a list (getDataRecords, getActions, ...) as the plain list of dicts the plugin answers, keyed by
// the schema's camelCase names, while the generator writes attribute access as for an object result. Only a
// variable holding a function's result and indexed with a number is touched: an object result is never indexed so.
func indexListItems(source []byte) ([]byte, error) {
	text := string(source)
	for _, match := range pythonFunctionResult.FindAllStringSubmatch(text, -1) {
		item := regexp.MustCompile(`\b` + match[1] + `\[(\d+)\]\.([a-z_][a-z0-9_]*)`)
		text = item.ReplaceAllStringFunc(text, func(access string) string {
			parts := item.FindStringSubmatch(access)
			return fmt.Sprintf("%s[%s][%q]", match[1], parts[1], camelCase(parts[2]))
		})
	}
	return []byte(text), nil
}

// camelCase turns the Python SDK's snake_case name back into the schema's: `created_at` to `createdAt`.
func camelCase(name string) string {
	parts := strings.Split(name, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

func warningsOf(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning {
			out = append(out, describe(d))
		}
	}
	return out
}

func errorsOf(diags hcl.Diagnostics) string {
	var out []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, describe(d))
		}
	}
	return strings.Join(out, "; ")
}

func describe(d *hcl.Diagnostic) string {
	text := d.Summary
	if d.Detail != "" && d.Detail != d.Summary {
		text += ": " + d.Detail
	}
	if d.Subject != nil {
		text = fmt.Sprintf("%s: %s", d.Subject, text)
	}
	return text
}

func prefixed(prefix string, lines []string) []string {
	out := make([]string, len(lines))
	for i, line := range lines {
		out[i] = prefix + ": " + line
	}
	return out
}

func unique(lines []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, line := range lines {
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
