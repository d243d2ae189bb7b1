package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/emud-dev/emud/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersionCommand(t *testing.T) {
	out, errOut, status := execute(t, "version")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.True(t, strings.HasPrefix(out, "emud "), out)
	assert.Contains(t, out, "go: "+runtime.Version())
}

func TestWriteVersion(t *testing.T) {
	var b strings.Builder
	writeVersion(&b, nil, false)
	assert.True(t, strings.HasPrefix(b.String(), "emud devel\n"), b.String())

	b.Reset()
	writeVersion(&b, &debug.BuildInfo{Main: debug.Module{Path: "github.com/emud-dev/emud", Version: "(devel)"}}, true)
	assert.True(t, strings.HasPrefix(b.String(), "emud devel\n"), b.String())

	b.Reset()
	writeVersion(&b, &debug.BuildInfo{
		Main:     debug.Module{Path: "github.com/emud-dev/emud", Version: "v0.1.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "3b8277c"}, {Key: "vcs.modified", Value: "true"}},
	}, true)
	assert.Equal(t, "emud v0.1.0\nmodule: github.com/emud-dev/emud\nrevision: 3b8277c (modified)\ngo: "+
		runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+"\n", b.String())
}
