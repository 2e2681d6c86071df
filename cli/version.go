package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionText is what `sluice version` and `sluice --version` print: the
// version (Version when set at link time, else the module's version as the go
// command stamped it: a tag, or a pseudo-version naming the commit), the VCS
// revision the binary was built from (and whether the tree had changes), and
// the Go toolchain and platform. One line, so scripts can take its second
// word.
func versionText() string {
	v, rev := Version, ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		var modified bool
		var at string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			case "vcs.time":
				at = s.Value
			}
		}
		if rev != "" {
			rev = "revision " + rev
			if at != "" {
				rev += " of " + at
			}
			if modified {
				rev += ", with uncommitted changes"
			}
			rev += ", "
		}
	}
	return fmt.Sprintf("sluice %s (%s%s, %s/%s)\n", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of sluice",
		Long: `Print the version of sluice: the release (or the module's pseudo-version,
which names the commit), the VCS revision it was built from when the build
recorded one (go build in a git checkout does, unless -buildvcs=false), with
the time of that commit and whether the tree had uncommitted changes, then the
Go version and the platform. sluice --version prints the same line.`,
		Example: `  sluice version
  sluice --version
  sluice version | awk '{print $2}'   # the version alone`,
		Args: cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprint(a.stdout, versionText())
		},
	}
}
