// Vendored, for this project's `npm run pulumi:install` (scripts/install-pulumi-cli.mts): the Node.js language host
// `pulumi-language-nodejs`, whose Go module (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3) the
// Go module proxy does not serve here. Copied unchanged from github.com/pulumi/pulumi, path
// sdk/nodejs/cmd/pulumi-language-nodejs/proxy_unix.go, tag v3.259.0 (commit 0ac56e876614aedf12771d73ef7e80959b8a6fd4).
// License: Apache-2.0 (the original notice follows). Built against github.com/pulumi/pulumi/pkg/v3 and sdk/v3
// v3.274.1 (see go.mod here).
// EDITS: none.

// Copyright 2016, Pulumi Corporation.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//go:build !windows

package main

import (
	"io"
	"os"
	"path"
	"syscall"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/contract"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
)

// Unix specific pipe implementation. Fairly simple as it sits on top of a pair of standard fifo
// files that we can communicate over.  Slightly complex as this involves extra cleanup steps to
// ensure they're cleaned up when we're done.
func createPipes() (pipes, error) {
	dir, err := os.MkdirTemp("", "pulumi-node-pipes")
	if err != nil {
		return nil, err
	}

	invokeReqPath, invokeResPath := path.Join(dir, "invoke_req"), path.Join(dir, "invoke_res")
	return &unixPipes{
		dir:     dir,
		reqPath: invokeReqPath,
		resPath: invokeResPath,
	}, nil
}

type unixPipes struct {
	dir              string
	reqPath, resPath string
	reqPipe, resPipe *os.File
}

func (p *unixPipes) directory() string {
	return p.dir
}

func (p *unixPipes) reader() io.Reader {
	return p.reqPipe
}

func (p *unixPipes) writer() io.Writer {
	return p.resPipe
}

func (p *unixPipes) connect() error {
	if err := syscall.Mkfifo(path.Join(p.dir, "invoke_req"), 0o600); err != nil {
		logging.V(10).Infof("createPipes: Received error opening request pipe: %s\n", err)
		return err
	}

	if err := syscall.Mkfifo(path.Join(p.dir, "invoke_res"), 0o600); err != nil {
		logging.V(10).Infof("createPipes: Received error opening result pipe: %s\n", err)
		return err
	}

	invokeReqPipe, err := os.OpenFile(p.reqPath, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	p.reqPipe = invokeReqPipe

	invokeResPipe, err := os.OpenFile(p.resPath, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	p.resPipe = invokeResPipe

	return nil
}

func (p *unixPipes) shutdown() {
	if p.reqPipe != nil {
		contract.IgnoreClose(p.reqPipe)
	}

	if p.resPipe != nil {
		contract.IgnoreClose(p.resPipe)
	}

	contract.IgnoreError(os.RemoveAll(p.dir))
}
