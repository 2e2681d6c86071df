// Command sluice runs pipelines declared in .sql files: see the cli package
// and `sluice --help`.
package main

import (
	"github.com/sluicehq/sluice/cli"
	"github.com/sluicehq/sluice/internal/hugepages"
	"github.com/sluicehq/sluice/pipeline"
)

func main() {
	hugepages.Reserve()
	cli.Main(cli.RequireProject(pipeline.LoadSQLProject))
}
