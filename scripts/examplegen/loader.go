package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/blang/semver"

	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// schemaLoader answers the package of schema.json, bound afresh for each request (a program generator imports
// its language section into the package it is given and keeps it there), and Pulumi's own package (`pulumi`, of the
// StackReference resource) from the generators' built-in copy; it refuses every other package: an example naming
// another one is a mistake to report, not a plugin to go looking for.
type schemaLoader struct {
	name string
	spec schema.PackageSpec
	path string
}

func newSchemaLoader(path string) (*schemaLoader, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(text, &spec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &schemaLoader{name: spec.Name, spec: spec, path: path}, nil
}

func (l *schemaLoader) load(name string) (*schema.Package, error) {
	if name == schema.DefaultPulumiPackage.Name {
		return schema.DefaultPulumiPackage, nil
	}
	if name != l.name {
		return nil, fmt.Errorf("the example uses the package %q; only %q (%s) is loaded", name, l.name, l.path)
	}
	pkg, diags, err := schema.BindSpec(l.spec, l, schema.ValidationOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.path, err)
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s does not bind: %w", l.path, diags)
	}
	return pkg, nil
}

func (l *schemaLoader) LoadPackage(name string, _ *semver.Version) (*schema.Package, error) {
	return l.load(name)
}

func (l *schemaLoader) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return l.load(d.Name)
}

func (l *schemaLoader) LoadPackageReference(name string, _ *semver.Version) (schema.PackageReference, error) {
	pkg, err := l.load(name)
	if err != nil {
		return nil, err
	}
	return pkg.Reference(), nil
}

func (l *schemaLoader) LoadPackageReferenceV2(
	_ context.Context, d *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	return l.LoadPackageReference(d.Name, nil)
}
