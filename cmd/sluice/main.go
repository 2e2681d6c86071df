// Command sluice runs pipelines declared in .sql files: see the cli package
// and `sluice --help`.
package main

import (
	"github.com/sluicehq/sluice/cli"
	"github.com/sluicehq/sluice/pipeline"
)

func main() { cli.Main(cli.RequireProject(pipeline.LoadSQLProject)) }
