//go:build tools

// Package tools names the CLI's main package, so that `go mod tidy` keeps everything it needs in go.sum.
package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
