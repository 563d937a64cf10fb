package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const schemaPath = "../../schema.json"

// program is an App with a Workflow on it, a ProviderConnection whose key is a secret config value, a Model on
// that connection, an invoke used as an input, options, and outputs.
const program = `name: support
runtime: yaml
config:
  providerKey:
    type: string
    secret: true
  region:
    type: string
    default: eu
resources:
  support-app:
    type: gms:index:App
    properties:
      name: Customer support
  triage:
    type: gms:Workflow
    properties:
      name: Triage
      app: ${support-app.guid}
  openai:
    type: gms:index:ProviderConnection
    properties:
      provider: openai
      key: ${providerKey}
      url: "https://${region}.example.com/v1 (costs 100%{)"
  gpt:
    type: gms:index:Model
    properties:
      llm: gpt-4o-mini
      provider: ${openai.guid}
    options:
      dependsOn:
        - ${triage}
      ignoreChanges: [url]
  bench:
    type: gms:index:Dataset
    properties:
      name: bench
      description:
        fn::invoke:
          function: gms:index:getAction
          arguments:
            name: Summarize
            app: ${support-app.guid}
          return: guid
outputs:
  modelGuid: ${gpt.guid}
`

func writeExample(t *testing.T, name, text string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func convert(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	loader, err := newSchemaLoader(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := convertExample(dir, loader)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func assertContains(t *testing.T, file string, text []byte, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("%s lacks %q; it is:\n%s", file, want, text)
		}
	}
}

func TestConvertsIntoEachLanguage(t *testing.T) {
	files := convert(t, writeExample(t, "support", program))
	if len(files) != 3 {
		t.Fatalf("wrote %d files, want 3: %v", len(files), sortedKeys(files))
	}
	ts := files["typescript/index.ts"]
	assertContains(t, "index.ts", ts,
		tsNativeLine+"\n",
		`const providerKey = config.requireSecret("providerKey");`,
		`const supportApp = new gms.App("support-app", {name: "Customer support"});`,
		`new gms.Workflow("triage", {`, `app: supportApp.guid,`,
		`new gms.ProviderConnection("openai", {`, `key: providerKey,`,
		"url: `https://${region}.example.com/v1 (costs 100%{)`,",
		`new gms.Model("gpt", {`, `provider: openai.guid,`, `dependsOn: [triage],`, `ignoreChanges: ["url"],`,
		`description: gms.getActionOutput({`,
		`export const modelGuid = gpt.guid;`,
	)
	if bytes.Contains(ts, []byte(tsImportLine)) {
		t.Errorf("index.ts still has %q", tsImportLine)
	}
	assertContains(t, "__main__.py", files["python/__main__.py"],
		"import pulumi_gms as gms\n",
		`provider_key = config.require_secret("providerKey")`,
		`support_app = gms.App("support-app", name="Customer support")`,
		`triage = gms.Workflow("triage",`, `app=support_app.guid)`,
		`openai = gms.ProviderConnection("openai",`, `key=provider_key`,
		`gpt = gms.Model("gpt",`, `provider=openai.guid,`, `depends_on=[triage]`,
		`description=gms.get_action_output(name="Summarize",`,
		`pulumi.export("modelGuid", gpt.guid)`,
	)
	assertContains(t, "main.go", files["go/main.go"],
		`"github.com/pulumi-gms/pulumi-gms/sdk/go/gms"`,
		`providerKey := cfg.RequireSecret("providerKey")`,
		`supportApp, err := gms.NewApp(ctx, "support-app", &gms.AppArgs{`,
		`triage, err := gms.NewWorkflow(ctx, "triage", &gms.WorkflowArgs{`, `App:  supportApp.Guid,`,
		`openai, err := gms.NewProviderConnection(ctx, "openai", &gms.ProviderConnectionArgs{`, `Key:      providerKey,`,
		`gpt, err := gms.NewModel(ctx, "gpt", &gms.ModelArgs{`, `Provider: openai.Guid,`, `pulumi.DependsOn(`,
		`gms.GetActionOutput(ctx, gms.GetActionOutputArgs{`,
		`ctx.Export("modelGuid", gpt.Guid)`,
	)
}

func TestTwoRunsGiveTheSameBytes(t *testing.T) {
	dir := writeExample(t, "support", program)
	first, second := convert(t, dir), convert(t, dir)
	for name, text := range first {
		if !bytes.Equal(text, second[name]) {
			t.Errorf("%s differs between two runs:\n%s\n---\n%s", name, text, second[name])
		}
	}
	// And through the command's own writing of the files.
	loader, err := newSchemaLoader(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	files, _, err := convertExample(dir, loader)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFiles(filepath.Join(out, "support"), files); err != nil {
		t.Fatal(err)
	}
	for name, text := range first {
		written, err := os.ReadFile(filepath.Join(out, "support", filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(written, text) {
			t.Errorf("%s was written differently (%v)", name, err)
		}
	}
}

func TestAPlainInvokeUsesThePlainFunction(t *testing.T) {
	files := convert(t, writeExample(t, "lookup", `name: lookup
runtime: yaml
variables:
  summarize:
    fn::invoke:
      function: gms:index:getAction
      arguments:
        name: Summarize
        app: Customer support
outputs:
  actionType: ${summarize.actionType}
`))
	assertContains(t, "index.ts", files["typescript/index.ts"], `const summarize = gms.getAction({`)
	assertContains(t, "__main__.py", files["python/__main__.py"], `summarize = gms.get_action(name="Summarize",`)
	assertContains(t, "main.go", files["go/main.go"], `summarize, err := gms.GetAction(ctx, &gms.GetActionArgs{`)
}

func TestImportOption(t *testing.T) {
	files := convert(t, writeExample(t, "adopted", `name: adopted
runtime: yaml
resources:
  billing:
    type: gms:index:App
    properties:
      name: Billing
    options:
      import: 5e306a16-8d3c-4a1b-9f0e-000000000001
`))
	assertContains(t, "index.ts", files["typescript/index.ts"], `import: "5e306a16-8d3c-4a1b-9f0e-000000000001",`)
	assertContains(t, "__main__.py", files["python/__main__.py"], `import_="5e306a16-8d3c-4a1b-9f0e-000000000001"`)
	assertContains(t, "main.go", files["go/main.go"], `pulumi.Import(pulumi.ID("5e306a16-8d3c-4a1b-9f0e-000000000001"))`)
}

// TestStackReference: a StackReference to another stack, named from the organization and stack the program runs
// in, whose outputs a resource reads (as the programs of discover's --split-by app read the shared stack's).
func TestStackReference(t *testing.T) {
	files := convert(t, writeExample(t, "team", `name: team
runtime: yaml
resources:
  sharedStack:
    type: pulumi:pulumi:StackReference
    properties:
      name: ${pulumi.organization}/shared/${pulumi.stack}
  quality:
    type: gms:index:Dataset
    properties:
      name: Quality
      app: ${sharedStack.outputs["apps"]["support"]}
`))
	assertContains(t, "index.ts", files["typescript/index.ts"],
		"const sharedStack = new pulumi.StackReference(\"sharedStack\", {name: `${pulumi.getOrganization()}/shared/${pulumi.getStack()}`});")
	assertContains(t, "index.ts", files["typescript/index.ts"], `app: sharedStack.outputs.apps?.support,`)
	assertContains(t, "__main__.py", files["python/__main__.py"],
		`shared_stack = pulumi.StackReference("sharedStack", stack_name=f"{pulumi.get_organization()}/shared/{pulumi.get_stack()}")`)
	assertContains(t, "__main__.py", files["python/__main__.py"], `app=shared_stack.outputs["apps"]["support"]`)
	assertContains(t, "main.go", files["go/main.go"], `sharedStack, err := pulumi.NewStackReference(ctx, "sharedStack", &pulumi.StackReferenceArgs{`)
}

func TestRefusals(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"missing required argument": {
			"resources:\n  a:\n    type: gms:index:App\n    properties:\n      name: x\n      description:\n        fn::invoke:\n          function: gms:index:getAction\n          arguments: { name: Summarize }\n          return: guid\n",
			"cannot assign expression",
		},
		"unknown property": {
			"resources:\n  a:\n    type: gms:index:App\n    properties:\n      name: x\n      colour: red\n",
			"colour",
		},
		"another package": {
			"resources:\n  a:\n    type: aws:s3:Bucket\n",
			`not one of the package gms`,
		},
		"unsupported builtin": {
			"variables:\n  a:\n    fn::toBase64: x\n",
			"fn::toBase64 is not supported",
		},
		"unsupported option": {
			"resources:\n  a:\n    type: gms:index:App\n    properties: { name: x }\n    options:\n      aliases: [b]\n",
			"the option aliases is not supported",
		},
		"unknown reference": {
			"outputs:\n  a: ${nowhere.guid}\n",
			"names no config, variable or resource",
		},
	}
	loader, err := newSchemaLoader(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := writeExample(t, "refused", "name: refused\nruntime: yaml\n"+c.yaml)
			_, _, err := convertExample(dir, loader)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestLoaderRefusesOtherPackages(t *testing.T) {
	loader, err := newSchemaLoader(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loader.LoadPackageReference("aws", nil); err == nil {
		t.Error("the loader answered the package aws")
	}
	if ref, err := loader.LoadPackageReference("gms", nil); err != nil || ref.Name() != "gms" {
		t.Errorf("the loader answered gms with %v, %v", ref, err)
	}
}

func TestUseNativeNamespace(t *testing.T) {
	source := "import * as pulumi from \"@pulumi/pulumi\";\n" + tsImportLine + "\n\nconst a = new gms.App(\"a\", {name: \"x\"});\n"
	got, err := useNativeNamespace([]byte(source))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(source, tsImportLine, tsNativeLine, 1)
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A program without the package is left as it is.
	plain := "import * as pulumi from \"@pulumi/pulumi\";\n"
	if got, err := useNativeNamespace([]byte(plain)); err != nil || string(got) != plain {
		t.Errorf("a program without pulumi-gms became %q (%v)", got, err)
	}
	// Any other import of the package means the generator changed: refused, not guessed at.
	for _, other := range []string{`import * as g from "pulumi-gms";`, `import { App } from "pulumi-gms";`} {
		if _, err := useNativeNamespace([]byte(other + "\n")); err == nil {
			t.Errorf("%s was accepted", other)
		}
	}
	if _, err := useNativeNamespace([]byte(tsImportLine + "\n" + tsImportLine + "\n")); err == nil {
		t.Error("two imports were accepted")
	}
}

func TestIdentifierAndQuote(t *testing.T) {
	for name, want := range map[string]string{"app": "app", "support-app": "supportApp", "my_app": "my_app", "2nd": "_2nd", "a.b c": "aBC"} {
		if got := identifier(name); got != want {
			t.Errorf("identifier(%q) = %q, want %q", name, got, want)
		}
	}
	if got, want := quote("a \"b\" \\ ${c} %{d}\n"), `"a \"b\" \\ $${c} %%{d}\n"`; got != want {
		t.Errorf("quote = %s, want %s", got, want)
	}
}

func TestIndexListItems(t *testing.T) {
	source := []byte(`records = gms.get_data_records(app="Support",
    limit=3)
action = gms.get_action(app="Support", name="Draft reply")
golden = gms.Dataset("golden",
    app=action.app,
    data=[
        records[0].guid,
        records[12].created_at,
    ])
other[0].guid
`)
	got, err := indexListItems(source)
	if err != nil {
		t.Fatal(err)
	}
	want := `records = gms.get_data_records(app="Support",
    limit=3)
action = gms.get_action(app="Support", name="Draft reply")
golden = gms.Dataset("golden",
    app=action.app,
    data=[
        records[0]["guid"],
        records[12]["createdAt"],
    ])
other[0].guid
`
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
