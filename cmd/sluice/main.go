// Command sluice runs pipelines declared in .sql files: see the cli package
// and `sluice --help`.
package main

import (
	"github.com/sluicehq/sluice/cli"
	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/pipeline"
)

// loadSQL builds the pipeline of a project's .sql files.
//
// TODO: pipeline.LoadSQL, once it lands: var loadSQL cli.Loader = pipeline.LoadSQL
var loadSQL cli.Loader = func(proj *pipeline.Project) (*pipeline.Pipeline, domain.Problems) {
	return nil, domain.Problems{domain.Errorf(domain.CodeNotImplemented,
		"this sluice cannot load .sql pipelines yet (%d file(s) listed by %s)", len(proj.Libraries), proj.File).
		WithHint("declare the pipeline in Go and run it through cli.Main (see the README)")}
}

func main() { cli.Main(cli.RequireProject(loadSQL)) }
