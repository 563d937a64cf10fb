// Command sdkgen writes the Python and Go SDKs of the gms package from schema.json, with the generators of
// github.com/pulumi/pulumi/pkg/v3 that the pinned CLI is built from. `pulumi package gen-sdk` would hand
// generation to the language hosts, whose modules the Go module proxy refuses here; the generators are
// ordinary packages of pkg/v3, so this program calls them itself (scripts/dist/sdks.mts runs it).
//
//	go run ./sdkgen -schema ../../schema.json -out <dir>    (from scripts/pulumi-cli)
//
// It writes <dir>/python and <dir>/go, replacing what they held. The output depends on schema.json and the
// pinned pkg/v3 alone: the same inputs give byte-identical files.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/blang/semver"
	"golang.org/x/mod/modfile"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	pygen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// tool is the generator's name in the header of every generated file.
const tool = "pulumi-gms sdkgen"

const sdkModule = "github.com/pulumi/pulumi/sdk/v3"

func main() {
	// A set of its own: pkg/v3's dependencies register logging flags on the global one.
	flags := flag.NewFlagSet("sdkgen", flag.ExitOnError)
	schemaPath := flags.String("schema", "", "the package schema (schema.json)")
	out := flags.String("out", "", "the folder to write python/ and go/ into")
	_ = flags.Parse(os.Args[1:])
	if *schemaPath == "" || *out == "" || flags.NArg() != 0 {
		flags.Usage()
		os.Exit(2)
	}
	if err := run(*schemaPath, *out); err != nil {
		fmt.Fprintf(os.Stderr, "sdkgen: %v\n", err)
		os.Exit(1)
	}
}

func run(schemaPath, out string) error {
	text, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	generators := []struct {
		dir      string
		generate func(*schema.Package) (map[string][]byte, error)
	}{
		{"python", generatePython},
		{"go", generateGo},
	}
	for _, g := range generators {
		// Each generator imports its language section into the package it is given and keeps it there,
		// so each gets a package bound afresh.
		pkg, err := bind(text, schemaPath)
		if err != nil {
			return err
		}
		files, err := g.generate(pkg)
		if err != nil {
			return fmt.Errorf("generating the %s SDK: %w", g.dir, err)
		}
		if err := writeTree(filepath.Join(out, g.dir), files); err != nil {
			return err
		}
	}
	return nil
}

// bind parses and validates the schema, as `pulumi package gen-sdk` does before generating.
func bind(text []byte, schemaPath string) (*schema.Package, error) {
	var spec schema.PackageSpec
	if err := json.Unmarshal(text, &spec); err != nil {
		return nil, fmt.Errorf("%s: %w", schemaPath, err)
	}
	pkg, diags, err := schema.BindSpec(spec, noExternalPackages{}, schema.ValidationOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", schemaPath, err)
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s does not bind: %w", schemaPath, diags)
	}
	return pkg, nil
}

// generatePython writes the Python package with its setup.py.
func generatePython(pkg *schema.Package) (map[string][]byte, error) {
	files, err := pygen.GeneratePackage(tool, pkg, nil, noExternalPackages{})
	if err != nil {
		return nil, err
	}
	// setup.py takes the wheel's long description from the README beside it, which the generator writes only
	// inside the package; without it the wheel would describe itself as a development version.
	readme, ok := files[path.Join(pythonPackageName(pkg), "README.md")]
	if !ok {
		return nil, errors.New("the Python generator wrote no README.md")
	}
	files["README.md"] = readme
	return files, nil
}

// pythonPackageName is the folder the Python generator writes the package into.
func pythonPackageName(pkg *schema.Package) string {
	if info, ok := pkg.Language["python"].(pygen.PackageInfo); ok && info.PackageName != "" {
		return info.PackageName
	}
	return pygen.PyPack(pkg.Namespace, pkg.Name)
}

// generateGo writes the Go module and completes two things the generator leaves to a release process.
func generateGo(pkg *schema.Package) (map[string][]byte, error) {
	if !pkg.SupportPack || pkg.Version == nil {
		return nil, errors.New("schema.json needs meta.supportPack and a version: without them the Go generator writes no go.mod")
	}
	files, err := gogen.GeneratePackage(tool, pkg, nil)
	if err != nil {
		return nil, err
	}
	modulePath, importPath, err := gogen.ModuleAndImportPath(pkg)
	if err != nil {
		return nil, err
	}
	root := strings.TrimPrefix(importPath, modulePath+"/")
	if err := pinSdkVersion(files, root, *pkg.Version); err != nil {
		return nil, err
	}
	if err := requireOwnSdk(files); err != nil {
		return nil, err
	}
	files["README.md"] = []byte(goReadme(pkg, modulePath, importPath))
	return files, nil
}

// goReadme is the module's README: what it is, how a program gets it, and a first program. The generator writes
// none for Go.
func goReadme(pkg *schema.Package, modulePath, importPath string) string {
	return fmt.Sprintf(`# %[1]s

%[2]s

## Install

    go get %[1]s@v%[3]s

The Pulumi engine downloads the provider plugin, `+"`pulumi-resource-%[4]s`"+`, on the first `+"`pulumi up`"+`.

## A first program

`+"```go"+`
package main

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"

	"%[5]s"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		key := config.RequireSecret(ctx, "openaiKey")
		support, err := %[4]s.NewApp(ctx, "support", &%[4]s.AppArgs{
			Name:        pulumi.String("Customer support"),
			Description: pulumi.String("Answers tickets"),
		})
		if err != nil {
			return err
		}
		openai, err := %[4]s.NewProviderConnection(ctx, "openai", &%[4]s.ProviderConnectionArgs{
			Provider: pulumi.String("openai"),
			Key:      key,
			Nickname: pulumi.String("Main"),
		})
		if err != nil {
			return err
		}
		if _, err := %[4]s.NewModel(ctx, "gpt", &%[4]s.ModelArgs{
			Llm:      pulumi.String("gpt-4o"),
			Provider: openai.ID(),
			Key:      key,
		}); err != nil {
			return err
		}
		ctx.Export("appGuid", support.Guid)
		return nil
	})
}
`+"```"+`

with the service and its key in the stack's configuration:

    pulumi config set %[4]s:baseUrl https://gms.example.com/v1
    pulumi config set --secret %[4]s:apiKey <API key>
    pulumi config set --secret openaiKey <the provider's key>
    pulumi up
`, modulePath, pkg.Description, pkg.Version.String(), pkg.Name, importPath)
}

// pinSdkVersion writes the package version into internal.SdkVersion. The generator leaves it empty, and then
// PkgVersion guesses the version from the import path (v1 for any path without /vN), so init.go would register
// the package and its module as 1.0.0, which a resource reference of a 0.x version never matches when the Go
// SDK rehydrates one (it looks registrations up by major version).
func pinSdkVersion(files map[string][]byte, root string, version semver.Version) error {
	name := path.Join(root, "internal", "pulumiVersion.go")
	empty := []byte("var SdkVersion semver.Version = semver.Version{}")
	if !bytes.Contains(files[name], empty) {
		return fmt.Errorf("%s no longer declares %q: read what this pkg/v3 generates before pinning the version", name, empty)
	}
	pinned := fmt.Appendf(nil, "var SdkVersion semver.Version = semver.MustParse(%q)", version.String())
	source, err := format.Source(bytes.Replace(files[name], empty, pinned, 1))
	if err != nil {
		return err
	}
	files[name] = source
	return nil
}

// requireOwnSdk makes go.mod require the sdk/v3 this program is built with, the one the project's pinned CLI
// uses, rather than the generator's floor: the SDK is then built and tested against the same Pulumi release
// as everything else here, from modules Go's cache already holds.
func requireOwnSdk(files map[string][]byte) error {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return errors.New("this program carries no module information: build it in module mode")
	}
	version := ""
	for _, dep := range info.Deps {
		if dep.Path == sdkModule {
			version = dep.Version
		}
	}
	if version == "" {
		return fmt.Errorf("this program is not built with %s", sdkModule)
	}
	mod, err := modfile.Parse("go.mod", files["go.mod"], nil)
	if err != nil {
		return err
	}
	if err := mod.AddRequire(sdkModule, version); err != nil {
		return err
	}
	text, err := mod.Format()
	if err != nil {
		return err
	}
	files["go.mod"] = text
	return nil
}

// writeTree replaces dir with the generated files.
func writeTree(dir string, files map[string][]byte) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for name, text := range files {
		file := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, text, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// noExternalPackages is the schema loader: schema.json references no other package, and a reference
// appearing would be a mistake to report, not a plugin to go looking for.
type noExternalPackages struct{}

func (noExternalPackages) refuse(name string) error {
	return fmt.Errorf("schema.json references the package %q; the generator loads no other package", name)
}

func (l noExternalPackages) LoadPackage(name string, _ *semver.Version) (*schema.Package, error) {
	return nil, l.refuse(name)
}

func (l noExternalPackages) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, l.refuse(d.Name)
}

func (l noExternalPackages) LoadPackageReference(name string, _ *semver.Version) (schema.PackageReference, error) {
	return nil, l.refuse(name)
}

func (l noExternalPackages) LoadPackageReferenceV2(
	_ context.Context, d *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	return nil, l.refuse(d.Name)
}
