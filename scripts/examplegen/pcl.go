package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/ast"
	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax/encoding"
)

// This file writes the PCL of a Pulumi YAML program. It covers what the examples use: typed config (secret or
// not, with a default), variables, resources of schema.json's package with their properties and the usual
// options, a StackReference (`pulumi:pulumi:StackReference`, whose `outputs` the programs discover writes with
// `--split-by app` read; the Go generator writes no compiling code for reading them, so discover writes no such Go
// program), outputs, `${...}` references and interpolations, and the builtins fn::invoke, fn::secret, fn::join,
// fn::select, fn::split, fn::toJSON, fn::readFile, fn::fileAsset, fn::stringAsset and fn::fileArchive. Anything
// else fails the conversion with an error naming it: an example that cannot be converted faithfully is a
// mistake to report, not something to approximate.

// yamlProgramToPCL reads <dir>/Pulumi.yaml and returns its program as PCL text.
func yamlProgramToPCL(dir string, pkgName string) (string, error) {
	path := filepath.Join(dir, "Pulumi.yaml")
	source, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var document yaml.Node
	if err := yaml.Unmarshal(source, &document); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if document.Kind != yaml.DocumentNode || len(document.Content) != 1 {
		return "", fmt.Errorf("%s holds no YAML document", path)
	}
	node, diags := encoding.UnmarshalYAML(path, document.Content[0], nil)
	if diags.HasErrors() {
		return "", fmt.Errorf("%s: %w", path, diags)
	}
	template, diags := ast.ParseTemplate(source, node)
	if diags.HasErrors() {
		return "", fmt.Errorf("%s: %w", path, diags)
	}
	w := &pclWriter{pkg: pkgName, names: map[string]symbol{}, used: map[string]string{}}
	if err := w.template(template); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return w.out.String(), nil
}

type symbolKind int

const (
	configSymbol symbolKind = iota
	variableSymbol
	resourceSymbol
)

// symbol is a name a YAML program declares, with the PCL identifier it becomes.
type symbol struct {
	kind  symbolKind
	ident string
}

type pclWriter struct {
	pkg   string
	out   strings.Builder
	names map[string]symbol
	// used maps each PCL identifier to the YAML name it stands for, to refuse two names that become one.
	used map[string]string
}

func (w *pclWriter) template(t *ast.TemplateDecl) error {
	if len(t.Components.Entries) > 0 {
		return errors.New("components are not supported")
	}
	config := t.GetConfig()
	for _, entry := range config.Entries {
		if err := w.declare(entry.Key.Value, configSymbol); err != nil {
			return err
		}
	}
	for _, entry := range t.Variables.Entries {
		if err := w.declare(entry.Key.Value, variableSymbol); err != nil {
			return err
		}
	}
	for _, entry := range t.Resources.Entries {
		if err := w.declare(entry.Key.Value, resourceSymbol); err != nil {
			return err
		}
	}
	for _, entry := range config.Entries {
		if err := w.config(entry); err != nil {
			return fmt.Errorf("config %s: %w", entry.Key.Value, err)
		}
	}
	for _, entry := range t.Variables.Entries {
		value, err := w.expr(entry.Value, false)
		if err != nil {
			return fmt.Errorf("variable %s: %w", entry.Key.Value, err)
		}
		fmt.Fprintf(&w.out, "%s = %s\n\n", w.names[entry.Key.Value].ident, value)
	}
	for _, entry := range t.Resources.Entries {
		if err := w.resource(entry); err != nil {
			return fmt.Errorf("resource %s: %w", entry.Key.Value, err)
		}
	}
	outputs := map[string]string{}
	for _, entry := range t.Outputs.Entries {
		if err := w.output(entry, outputs); err != nil {
			return fmt.Errorf("output %s: %w", entry.Key.Value, err)
		}
	}
	return nil
}

// declare gives a YAML name its PCL identifier.
func (w *pclWriter) declare(name string, kind symbolKind) error {
	if _, ok := w.names[name]; ok {
		return fmt.Errorf("%q is declared twice", name)
	}
	ident := identifier(name)
	if other, ok := w.used[ident]; ok {
		return fmt.Errorf("%q and %q both become the identifier %s", other, name, ident)
	}
	w.used[ident] = name
	w.names[name] = symbol{kind: kind, ident: ident}
	return nil
}

var identifierPart = regexp.MustCompile(`[A-Za-z0-9_]+`)

// identifier is a legal PCL identifier for a YAML name: its letters and digits, camel-cased across any other
// characters (`my-app` is myApp), led by an underscore when it would start with a digit. The YAML name itself is
// kept as the PCL node's __logicalName, so only the programs' variable names depend on this.
func identifier(name string) string {
	var b strings.Builder
	for i, part := range identifierPart.FindAllString(name, -1) {
		if i > 0 {
			runes := []rune(part)
			runes[0] = unicode.ToUpper(runes[0])
			part = string(runes)
		}
		b.WriteString(part)
	}
	ident := b.String()
	if ident == "" || unicode.IsDigit(rune(ident[0])) {
		ident = "_" + ident
	}
	return ident
}

// configTypes maps Pulumi YAML's config types to PCL's.
var configTypes = map[string]string{
	"string":  "string",
	"integer": "int",
	"number":  "number",
	"boolean": "bool",
}

func configType(yamlType string) (string, error) {
	if t, ok := configTypes[yamlType]; ok {
		return t, nil
	}
	if inner, ok := strings.CutPrefix(yamlType, "List<"); ok && strings.HasSuffix(inner, ">") {
		element, err := configType(strings.TrimSuffix(inner, ">"))
		if err != nil {
			return "", err
		}
		return "list(" + element + ")", nil
	}
	return "", fmt.Errorf("the config type %q is not supported", yamlType)
}

func (w *pclWriter) config(entry ast.ConfigMapEntry) error {
	key := entry.Key.Value
	if strings.Contains(key, ":") {
		return errors.New("config of another namespace (a provider's) is stack configuration, not part of the program")
	}
	param := entry.Value
	if param.Value != nil {
		return errors.New("a config value in Pulumi.yaml is not supported: declare a type and a default")
	}
	yamlType := param.Type.GetValue()
	if yamlType == "" {
		return errors.New("declare its type")
	}
	typ, err := configType(yamlType)
	if err != nil {
		return err
	}
	fmt.Fprintf(&w.out, "config %s %s {\n", w.names[key].ident, quote(typ))
	fmt.Fprintf(&w.out, "  __logicalName = %s\n", quote(key))
	if param.Secret != nil && param.Secret.Value {
		w.out.WriteString("  secret = true\n")
	}
	if param.Default != nil {
		value, err := w.expr(param.Default, false)
		if err != nil {
			return err
		}
		fmt.Fprintf(&w.out, "  default = %s\n", value)
	}
	w.out.WriteString("}\n\n")
	return nil
}

func (w *pclWriter) resource(entry ast.ResourcesMapEntry) error {
	decl := entry.Value
	if decl.Get.Id != nil {
		return errors.New("get is not supported")
	}
	if decl.DefaultProvider != nil {
		return errors.New("defaultProvider is not supported")
	}
	if decl.Properties.Expr != nil {
		return errors.New("properties given as one expression are not supported: list them")
	}
	token, err := w.token(decl.Type.GetValue())
	if err != nil {
		return err
	}
	logicalName := entry.Key.Value
	if decl.Name != nil {
		logicalName = decl.Name.Value
	}
	fmt.Fprintf(&w.out, "resource %s %s {\n", w.names[entry.Key.Value].ident, quote(token))
	fmt.Fprintf(&w.out, "  __logicalName = %s\n", quote(logicalName))
	var properties []ast.PropertyMapEntry
	if decl.Properties.PropertyMap != nil {
		properties = decl.Properties.PropertyMap.Entries
	}
	for _, property := range properties {
		value, err := w.expr(property.Value, true)
		if err != nil {
			return fmt.Errorf("%s: %w", property.Key.Value, err)
		}
		fmt.Fprintf(&w.out, "  %s = %s\n", key(property.Key.Value), value)
	}
	options, err := w.options(decl.Options)
	if err != nil {
		return fmt.Errorf("options: %w", err)
	}
	if len(options) > 0 {
		w.out.WriteString("\n  options {\n")
		for _, option := range options {
			fmt.Fprintf(&w.out, "    %s\n", option)
		}
		w.out.WriteString("  }\n")
	}
	w.out.WriteString("}\n\n")
	return nil
}

// options is the PCL of the supported resource options, one `name = value` each, in a fixed order.
func (w *pclWriter) options(o ast.ResourceOptionsDecl) ([]string, error) {
	var lines []string
	add := func(name string, value ast.Expr) error {
		if value == nil {
			return nil
		}
		text, err := w.expr(value, false)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		lines = append(lines, name+" = "+text)
		return nil
	}
	// ignoreChanges and its kind name properties of the resource, which PCL writes as bare names.
	addProperties := func(name string, list *ast.StringListDecl) error {
		if list == nil {
			return nil
		}
		var names []string
		for _, element := range list.GetElements() {
			if !pclIdentifier.MatchString(element.Value) {
				return fmt.Errorf("%s: %q is not a property name", name, element.Value)
			}
			names = append(names, element.Value)
		}
		lines = append(lines, name+" = ["+strings.Join(names, ", ")+"]")
		return nil
	}
	unsupported := map[string]bool{
		"aliases":        o.Aliases != nil,
		"customTimeouts": o.CustomTimeouts != nil,
		"providers":      o.Providers != nil,
		"hideDiffs":      o.HideDiffs != nil,
	}
	for _, name := range sortedKeys(unsupported) {
		if unsupported[name] {
			return nil, fmt.Errorf("the option %s is not supported", name)
		}
	}
	steps := []error{
		add("parent", o.Parent),
		add("provider", o.Provider),
		add("dependsOn", o.DependsOn),
		add("protect", o.Protect),
		add("deletedWith", o.DeletedWith),
		addIf(o.DeleteBeforeReplace != nil, func() error { return add("deleteBeforeReplace", o.DeleteBeforeReplace) }),
		addIf(o.RetainOnDelete != nil, func() error { return add("retainOnDelete", o.RetainOnDelete) }),
		addProperties("ignoreChanges", o.IgnoreChanges),
		addProperties("replaceOnChanges", o.ReplaceOnChanges),
		addProperties("additionalSecretOutputs", o.AdditionalSecretOutputs),
		addIf(o.Version != nil, func() error { return add("version", o.Version) }),
		addIf(o.PluginDownloadURL != nil, func() error { return add("pluginDownloadURL", o.PluginDownloadURL) }),
		addIf(o.Import != nil, func() error { return add("import", o.Import) }),
	}
	if err := errors.Join(steps...); err != nil {
		return nil, err
	}
	return lines, nil
}

// addIf runs add when a typed option (a *ast.BooleanExpr or *ast.StringExpr, which a nil ast.Expr would not
// equal) is present.
func addIf(present bool, add func() error) error {
	if !present {
		return nil
	}
	return add()
}

func (w *pclWriter) output(entry ast.PropertyMapEntry, seen map[string]string) error {
	name := entry.Key.Value
	ident := identifier(name)
	if other, ok := seen[ident]; ok {
		return fmt.Errorf("%q and %q both become the identifier %s", other, name, ident)
	}
	seen[ident] = name
	// An output's identifier may equal a resource's or variable's in PCL, but not in the generated programs.
	if _, ok := w.used[ident]; ok {
		ident += "Output"
	}
	value, err := w.expr(entry.Value, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(&w.out, "output %s {\n  __logicalName = %s\n  value = %s\n}\n\n", ident, quote(name), value)
	return nil
}

// stackReference is the type of Pulumi's own StackReference resource, the one resource of another package than
// schema.json's that a program may declare (the loader serves its schema).
const stackReference = "pulumi:pulumi:StackReference"

// token is the full type token of a resource or function of the package, `gms:index:App` for `gms:App` too, or
// the StackReference's.
func (w *pclWriter) token(token string) (string, error) {
	parts := strings.Split(token, ":")
	switch {
	case token == stackReference:
		return token, nil
	case len(parts) == 2 && parts[0] == w.pkg:
		return parts[0] + ":index:" + parts[1], nil
	case len(parts) == 3 && parts[0] == w.pkg:
		return token, nil
	default:
		return "", fmt.Errorf("the type %q is not one of the package %s", token, w.pkg)
	}
}

// expr is the PCL of a YAML expression. A reference to a resource as a whole, in a resource's property (where
// a resource stands for its ID in Pulumi YAML), becomes its `id`; elsewhere (options, outputs) the resource.
func (w *pclWriter) expr(e ast.Expr, inProperty bool) (string, error) {
	switch e := e.(type) {
	case *ast.NullExpr:
		return "null", nil
	case *ast.BooleanExpr:
		return strconv.FormatBool(e.Value), nil
	case *ast.NumberExpr:
		if e.Value == math.Trunc(e.Value) && math.Abs(e.Value) < 1e15 {
			return strconv.FormatInt(int64(e.Value), 10), nil
		}
		return strconv.FormatFloat(e.Value, 'g', -1, 64), nil
	case *ast.StringExpr:
		return quote(e.Value), nil
	case *ast.SymbolExpr:
		return w.access(e.Property, inProperty)
	case *ast.InterpolateExpr:
		var b strings.Builder
		b.WriteByte('"')
		for _, part := range e.Parts {
			b.WriteString(escape(part.Text))
			if part.Value != nil {
				value, err := w.access(part.Value, true)
				if err != nil {
					return "", err
				}
				b.WriteString("${" + value + "}")
			}
		}
		b.WriteByte('"')
		return b.String(), nil
	case *ast.ListExpr:
		elements := make([]string, 0, len(e.Elements))
		for _, element := range e.Elements {
			text, err := w.expr(element, inProperty)
			if err != nil {
				return "", err
			}
			elements = append(elements, text)
		}
		return "[" + strings.Join(elements, ", ") + "]", nil
	case *ast.ObjectExpr:
		return w.object(e, inProperty)
	case *ast.InvokeExpr:
		return w.invoke(e)
	case *ast.SecretExpr:
		return w.call("secret", inProperty, e.Value)
	case *ast.JoinExpr:
		return w.call("join", inProperty, e.Delimiter, e.Values)
	case *ast.SelectExpr:
		return w.call("element", inProperty, e.Values, e.Index)
	case *ast.SplitExpr:
		return w.call("split", inProperty, e.Delimiter, e.Source)
	case *ast.ToJSONExpr:
		return w.call("toJSON", inProperty, e.Value)
	case *ast.ReadFileExpr:
		return w.call("readFile", inProperty, e.Path)
	case *ast.FileAssetExpr:
		return w.call("fileAsset", inProperty, e.Source)
	case *ast.StringAssetExpr:
		return w.call("stringAsset", inProperty, e.Source)
	case *ast.FileArchiveExpr:
		return w.call("fileArchive", inProperty, e.Source)
	case ast.BuiltinExpr:
		return "", fmt.Errorf("%s is not supported", e.Name().Value)
	default:
		return "", fmt.Errorf("the expression %T is not supported", e)
	}
}

func (w *pclWriter) object(e *ast.ObjectExpr, inProperty bool) (string, error) {
	if len(e.Entries) == 0 {
		return "{}", nil
	}
	var b strings.Builder
	b.WriteString("{\n")
	for _, entry := range e.Entries {
		name, ok := entry.Key.(*ast.StringExpr)
		if !ok {
			return "", errors.New("an object key must be a plain string")
		}
		value, err := w.expr(entry.Value, inProperty)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name.Value, err)
		}
		fmt.Fprintf(&b, "%s = %s\n", key(name.Value), value)
	}
	b.WriteString("}")
	return b.String(), nil
}

func (w *pclWriter) call(function string, inProperty bool, args ...ast.Expr) (string, error) {
	texts := make([]string, 0, len(args))
	for _, arg := range args {
		text, err := w.expr(arg, inProperty)
		if err != nil {
			return "", fmt.Errorf("fn::%s: %w", function, err)
		}
		texts = append(texts, text)
	}
	return function + "(" + strings.Join(texts, ", ") + ")", nil
}

func (w *pclWriter) invoke(e *ast.InvokeExpr) (string, error) {
	o := e.CallOpts
	if o.Parent != nil || o.Provider != nil || o.DependsOn != nil || o.Version != nil || o.PluginDownloadURL != nil {
		return "", errors.New("fn::invoke options are not supported")
	}
	token, err := w.token(e.Token.GetValue())
	if err != nil {
		return "", err
	}
	args := "{}"
	if e.CallArgs != nil {
		if args, err = w.object(e.CallArgs, true); err != nil {
			return "", fmt.Errorf("fn::invoke %s: %w", token, err)
		}
	}
	call := "invoke(" + quote(token) + ", " + args + ")"
	if e.Return != nil {
		if !pclIdentifier.MatchString(e.Return.Value) {
			return "", fmt.Errorf("fn::invoke %s: return %q is not a property name", token, e.Return.Value)
		}
		call += "." + e.Return.Value
	}
	return call, nil
}

// access is the PCL traversal of a `${...}` reference.
func (w *pclWriter) access(p *ast.PropertyAccess, inProperty bool) (string, error) {
	root, ok := p.Accessors[0].(*ast.PropertyName)
	if !ok {
		return "", fmt.Errorf("${%v} does not start with a name", p)
	}
	var b strings.Builder
	rest := p.Accessors[1:]
	if root.Name == "pulumi" {
		if len(rest) != 1 {
			return "", fmt.Errorf("${%v} is not supported", p)
		}
		switch name, _ := rest[0].(*ast.PropertyName); {
		case name != nil && (name.Name == "stack" || name.Name == "project" || name.Name == "organization"):
			return name.Name + "()", nil
		default:
			return "", fmt.Errorf("${%v} is not supported", p)
		}
	}
	symbol, ok := w.names[root.Name]
	if !ok {
		return "", fmt.Errorf("${%v} names no config, variable or resource", p)
	}
	b.WriteString(symbol.ident)
	if symbol.kind == resourceSymbol && len(rest) == 0 && inProperty {
		b.WriteString(".id")
	}
	for _, accessor := range rest {
		switch accessor := accessor.(type) {
		case *ast.PropertyName:
			if !pclIdentifier.MatchString(accessor.Name) {
				return "", fmt.Errorf("${%v}: %q is not a property name", p, accessor.Name)
			}
			b.WriteString("." + accessor.Name)
		case *ast.PropertySubscript:
			switch index := accessor.Index.(type) {
			case int:
				fmt.Fprintf(&b, "[%d]", index)
			case string:
				b.WriteString("[" + quote(index) + "]")
			default:
				return "", fmt.Errorf("${%v}: the subscript %v is not supported", p, index)
			}
		}
	}
	return b.String(), nil
}

var pclIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// key is an object key or attribute name: bare when it is an identifier, else quoted.
func key(name string) string {
	if pclIdentifier.MatchString(name) {
		return name
	}
	return quote(name)
}

// quote is an HCL string literal of s, which PCL reads back as s (no interpolation).
func quote(s string) string {
	return `"` + escape(s) + `"`
}

// escape writes s for inside an HCL template: HCL's escapes, and `${` and `%{` doubled so they stay text.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	text := strings.ReplaceAll(b.String(), "${", "$${")
	return strings.ReplaceAll(text, "%{", "%%{")
}
