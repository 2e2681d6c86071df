package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/pipeline"
)

func (a *app) initCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "init NAME",
		Short: "Create a working pipeline directory with sample data",
		Long: `Create the directory NAME holding a pipeline that runs as it is:

  NAME/pipeline.yaml              the pipeline's settings
  NAME/transformations/NAME.sql   a streaming table over the sample files and
                                  a materialized view over it
  NAME/data/orders-*.json         sample orders (JSON lines)
  NAME/README.md                  what to try next

The directory must not exist, or be empty. The pipeline is named after the
directory, with any name pipeline.yaml takes (sales, sales-etl, 2026_sales);
init writes it into pipeline.yaml, quoted when YAML needs it.`,
		Example: `  sluice init sales
  sluice init pipelines/sales-etl
  cd sales && sluice run && sluice table daily_totals`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			abs, err := filepath.Abs(dir)
			if err != nil {
				return fail(ExitFailed, err)
			}
			// The pipeline is named after its directory, by the rule
			// pipeline.yaml's name follows: sales-etl, 2026_sales and
			// "sales etl" are names.
			name := filepath.Base(abs)
			if dir == "" || !pipeline.ValidName(name) || name == string(filepath.Separator) {
				return fail(ExitInvalid, domain.Errorf(domain.CodePipelineConfigInvalid, "%q cannot name a pipeline", dir).
					WithHint("give the directory to create, e.g. sluice init sales"))
			}
			if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
				return fail(ExitInvalid, domain.Errorf(domain.CodePipelineConfigInvalid, "%s already exists and is not empty", dir).
					WithHint("choose another name, or remove the directory"))
			}
			for path, content := range initFiles(name) {
				full := filepath.Join(dir, filepath.FromSlash(path))
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					return fail(ExitFailed, err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					return fail(ExitFailed, err)
				}
			}
			fmt.Fprintf(a.stdout, "created pipeline %q in %s\n\n  cd %s\n  sluice validate\n  sluice run\n  sluice table daily_totals\n", name, dir, shellWord(dir))
			return nil
		},
	}
}

// yamlString writes s as a YAML string: plain when YAML reads it back as the
// same string, double-quoted otherwise (123, true, null, "a: b" and "#x"
// would be read as a number, a boolean, nothing, a mapping and a comment).
func yamlString(s string) string {
	var back struct {
		V yaml.Node `yaml:"v"`
	}
	if yaml.Unmarshal([]byte("v: "+s), &back) == nil && back.V.Kind == yaml.ScalarNode && back.V.Tag == "!!str" &&
		back.V.Style == 0 && back.V.Value == s {
		return s
	}
	b, _ := json.Marshal(s) // a JSON string is a YAML double-quoted string
	return string(b)
}

// shellWord quotes s for a POSIX shell when it needs it, for the commands
// init suggests.
func shellWord(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+,:@%", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// initFiles are the files of a new pipeline, by path under its directory.
func initFiles(name string) map[string]string {
	return map[string]string{
		"pipeline.yaml":                    strings.ReplaceAll(initYAML, "NAME", yamlString(name)),
		"transformations/" + name + ".sql": initSQL,
		"data/orders-0001.json":            initData1,
		"data/orders-0002.json":            initData2,
		"README.md":                        strings.ReplaceAll(initReadme, "NAME", name),
		".gitignore":                       ".sluice/\n",
	}
}

const initYAML = `# The settings of pipeline NAME. See the sluice README for every field.
name: NAME
# The event log and the tables live here (default .sluice).
storage: .sluice
# The definition files (default: every .sql file of the directory).
libraries:
  - glob:
      include: transformations/**
# ${source_dir} in the SQL files.
configuration:
  source_dir: data
development: true
`

const initSQL = `-- Orders, read incrementally from the JSON files under ${source_dir}: each
-- file is read exactly once, by the first update after it lands.
CREATE OR REFRESH STREAMING TABLE raw_orders
COMMENT 'orders as they land'
AS SELECT * FROM STREAM read_files('${source_dir}/*.json', format => 'json');

-- Orders and revenue per day, recomputed when raw_orders changes.
CREATE OR REFRESH MATERIALIZED VIEW daily_totals
COMMENT 'orders and revenue per day'
AS SELECT order_date, count(*) AS orders, sum(quantity * price) AS revenue
FROM raw_orders
GROUP BY order_date;
`

const initData1 = `{"order_id": 1, "order_date": "2026-12-01", "customer": "ada", "quantity": 2, "price": 9.5}
{"order_id": 2, "order_date": "2026-12-01", "customer": "grace", "quantity": 1, "price": 120.0}
{"order_id": 3, "order_date": "2026-12-01", "customer": "edsger", "quantity": 5, "price": 3.25}
{"order_id": 4, "order_date": "2026-12-02", "customer": "ada", "quantity": 1, "price": 42.0}
`

const initData2 = `{"order_id": 5, "order_date": "2026-12-02", "customer": "barbara", "quantity": 3, "price": 15.0}
{"order_id": 6, "order_date": "2026-12-02", "customer": "grace", "quantity": 2, "price": 7.75}
{"order_id": 7, "order_date": "2026-12-03", "customer": "ken", "quantity": 10, "price": 1.2}
{"order_id": 8, "order_date": "2026-12-03", "customer": "ada", "quantity": 1, "price": 64.0}
`

const initReadme = "# NAME\n\n" +
	"A sluice pipeline: `transformations/NAME.sql` reads the JSON lines files under `data/`\n" +
	"into the streaming table `raw_orders`, and keeps the materialized view\n" +
	"`daily_totals` (orders and revenue per day) up to date.\n\n" +
	"```sh\n" +
	"sluice validate                          # check the definitions\n" +
	"sluice run                               # one update: read what landed, stop\n" +
	"sluice table daily_totals                # the view's rows\n" +
	"sluice table raw_orders --format jsonl   # one JSON object per row\n" +
	"sluice events --update last              # what the update did\n" +
	"```\n\n" +
	"Drop another file into `data/` (write it under a name starting with `_` or `.`,\n" +
	"then rename it) and run again: only the new file is read. `sluice run\n" +
	"--full-refresh-all` starts every table afresh; `sluice run --continuous` keeps\n" +
	"reading new files until Ctrl-C.\n\n" +
	"The event log and the tables are under `.sluice/` (the `storage` of\n" +
	"`pipeline.yaml`); `sluice replay --verify` checks them against the log.\n"
