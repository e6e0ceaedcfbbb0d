// Package buildinfo says which dbmark build is running.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Version is dbmark's release version.
const Version = "0.1.0-dev"

// Revision is the VCS revision, set at link time by the Makefile
// (-X github.com/dbmark/dbmark/internal/buildinfo.Revision=...). Builds
// without it fall back to what the Go toolchain stamped, if anything.
var Revision = ""

// Info is the build's identity.
type Info struct {
	Version  string
	Revision string
	Modified bool
	Go       string
}

// Get returns the build's identity.
func Get() Info {
	in := Info{Version: Version, Revision: Revision, Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if in.Revision == "" {
					in.Revision = s.Value
				}
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
	}
	if len(in.Revision) > 12 {
		in.Revision = in.Revision[:12]
	}
	if in.Revision == "" {
		in.Revision = "unknown"
	}
	return in
}
