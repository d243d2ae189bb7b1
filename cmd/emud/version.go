package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print emud's module version and the Go version it was built with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, ok := debug.ReadBuildInfo()
			writeVersion(cmd.OutOrStdout(), bi, ok)
			return nil
		},
	}
}

// writeVersion prints the module path and version, the VCS revision when the
// build recorded one, and the Go toolchain. A binary built from a work tree
// (go run, go build without a module version) reports "devel".
func writeVersion(w io.Writer, bi *debug.BuildInfo, ok bool) {
	version, path := "devel", "github.com/emud-dev/emud"
	var rev, modified string
	if ok && bi != nil {
		if bi.Main.Path != "" {
			path = bi.Main.Path
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = " (modified)"
				}
			}
		}
	}
	fmt.Fprintf(w, "emud %s\n", version)
	fmt.Fprintf(w, "module: %s\n", path)
	if rev != "" {
		fmt.Fprintf(w, "revision: %s%s\n", rev, modified)
	}
	fmt.Fprintf(w, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
