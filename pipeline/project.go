package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/suggest"
)

// ProjectFiles are the names of a pipeline's settings file, in the order they
// are looked for.
var ProjectFiles = []string{"pipeline.yaml", "pipeline.yml"}

// DefaultStorage is the storage directory, under the pipeline directory, when
// pipeline.yaml names none.
const DefaultStorage = ".sluice"

// Project is a pipeline directory as pipeline.yaml describes it:
//
//	name: sales                      # required
//	storage: .sluice                 # default; relative to the directory
//	libraries:                       # default: every **/*.sql outside storage
//	  - glob: {include: transformations/**}
//	  - file: {path: extra/orders.sql}
//	configuration: {source_dir: data}  # ${source_dir} in SQL, and SET
//	catalog: main                    # the default namespace
//	schema: sales
//	continuous: false
//	development: false
//	max_concurrent_flows: 4
//	state_memory_mib: 1024           # per AUTO CDC table and per deduplication; the rest spills to disk
//	event_hooks:                     # webhooks told of events
//	  - {name: alerts, on: [update_failed, flow_failed], url: "https://...", headers: {Authorization: "Bearer ${env:TOKEN}"}}
type Project struct {
	// Dir is the pipeline directory, absolute.
	Dir string
	// File is the settings file, absolute; "" when the directory has none
	// (a pipeline declared in Go may go without one).
	File string
	// Name is the pipeline's name.
	Name string
	// Storage is the event store's directory, absolute.
	Storage string
	// Libraries are the definition files, absolute and sorted.
	Libraries []string
	// Configuration holds the values of ${key} parameters.
	Configuration map[string]string
	// Catalog and Schema are the default namespace of unqualified names.
	Catalog, Schema string
	// Continuous and Development are the update modes (see Pipeline).
	Continuous, Development bool
	// EventHooks are the webhooks told of the pipeline's events.
	EventHooks []EventHook
	// MaxConcurrentFlows bounds the micro-batches running at once; 0 means
	// the default.
	MaxConcurrentFlows int
	// StateMemoryMiB bounds the keys of each AUTO CDC table's state kept in
	// memory, in MiB; 0 means the default (processors.DefaultStateMemory).
	StateMemoryMiB int64
}

// FindProject returns the pipeline directory that holds dir: dir itself or
// the nearest parent with a pipeline.yaml (or pipeline.yml). It fails with
// PIPELINE_NOT_FOUND when there is none up to the root.
func FindProject(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", domain.Wrap(domain.CodePipelineNotFound, err, "resolving "+dir)
	}
	for d := abs; ; {
		for _, name := range ProjectFiles {
			if info, err := os.Stat(filepath.Join(d, name)); err == nil && !info.IsDir() {
				return d, nil
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", domain.Errorf(domain.CodePipelineNotFound, "no %s in %s or any directory above it", ProjectFiles[0], abs)
		}
		d = parent
	}
}

// LoadProject reads the pipeline.yaml (or pipeline.yml) of the pipeline
// directory dir and resolves its storage and libraries. Every problem of the
// file is reported at once, as domain.Problems, each with its code, its file
// and line: an unknown field, a missing name, a configuration value that is
// not a string, a library that matches no file. With problems of its fields
// (not of its YAML) the project is returned too, holding the fields that were
// right, so that its libraries can still be checked. A directory without a
// settings file is PIPELINE_NOT_FOUND.
func LoadProject(dir string) (*Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, domain.Wrap(domain.CodePipelineNotFound, err, "resolving "+dir)
	}
	var found []string
	for _, name := range ProjectFiles {
		if info, err := os.Stat(filepath.Join(abs, name)); err == nil && !info.IsDir() {
			found = append(found, filepath.Join(abs, name))
		}
	}
	switch len(found) {
	case 0:
		return nil, domain.Errorf(domain.CodePipelineNotFound, "no %s in %s", ProjectFiles[0], abs)
	case 2:
		return nil, domain.Errorf(domain.CodePipelineConfigInvalid, "%s has both pipeline.yaml and pipeline.yml", abs).
			WithHint("keep one of the two files").At(found[1], 0, 0)
	}
	text, err := os.ReadFile(found[0])
	if err != nil {
		return nil, domain.Wrap(domain.CodePipelineConfigInvalid, err, "reading "+found[0]).At(found[0], 0, 0)
	}
	return ParseProject(abs, found[0], text)
}

// ParseProject reads the text of a settings file of the pipeline directory
// dir (absolute). file names it in messages; libraries and storage are
// resolved under dir, so they must exist there. Problems come as LoadProject
// gives them.
func ParseProject(dir, file string, text []byte) (*Project, error) {
	pr := &projectReader{file: file, rel: relName(dir, file)}
	proj := &Project{Dir: dir, File: file, Storage: filepath.Join(dir, DefaultStorage)}
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		line := 0
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			line = yamlErrorLine(err.Error())
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if line > 0 {
			msg = strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", line))
		}
		return nil, domain.Problems{pr.errAt(line, 0, "%s", msg)}
	}
	if len(doc.Content) == 0 {
		return nil, domain.Problems{pr.errAt(1, 1, "the file is empty: it needs at least `name: NAME`")}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, domain.Problems{pr.errAt(root.Line, root.Column, "the file must be a mapping of fields (name: ..., libraries: ...), not a %s", kindName(root))}
	}
	var libs *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seen[k.Value] {
			pr.add(pr.errAt(k.Line, k.Column, "field %q is given twice", k.Value))
			continue
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			proj.Name = pr.str(k, v)
			if !ValidName(proj.Name) && v.Kind == yaml.ScalarNode {
				pr.add(pr.errAt(v.Line, v.Column, "name is empty"))
			}
		case "storage":
			if s := pr.str(k, v); s != "" {
				proj.Storage = resolve(dir, s)
			}
		case "libraries":
			libs = v
		case "configuration":
			proj.Configuration = pr.configuration(v)
		case "catalog":
			proj.Catalog = pr.str(k, v)
		case "schema":
			proj.Schema = pr.str(k, v)
		case "continuous":
			proj.Continuous = pr.boolean(k, v)
		case "development":
			proj.Development = pr.boolean(k, v)
		case "max_concurrent_flows":
			proj.MaxConcurrentFlows = pr.positive(k, v)
		case "state_memory_mib":
			proj.StateMemoryMiB = int64(pr.positive(k, v))
		case "event_hooks":
			proj.EventHooks = pr.eventHooks(v)
		default:
			pr.add(pr.errAt(k.Line, k.Column, "unknown field %q%s", k.Value, didYouMean(k.Value, projectFields)).
				WithHint("the fields are: " + strings.Join(projectFields, ", ")))
		}
	}
	if !seen["name"] {
		pr.add(pr.errAt(root.Line, root.Column, "the pipeline has no name").WithHint("add `name: NAME` to " + pr.rel))
	}
	proj.Libraries = pr.libraries(dir, proj.Storage, libs)
	if len(pr.problems) > 0 {
		// The fields that were right are set: the libraries can still be
		// checked, so that one run reports every problem.
		return proj, pr.problems
	}
	return proj, nil
}

// ValidName reports whether name may name a pipeline: any text but the empty
// one. pipeline.yaml's name and sluice init's argument follow this one rule.
func ValidName(name string) bool { return name != "" }

var projectFields = []string{"name", "storage", "libraries", "configuration", "catalog", "schema", "continuous", "development", "max_concurrent_flows", "state_memory_mib", "event_hooks"}

// EventHook is a webhook of pipeline.yaml's event_hooks: the events it is
// on are POSTed to its url as JSON.
type EventHook struct {
	Name string
	// On lists what the hook is told of: update_failed, flow_failed,
	// expectation_failed, ... (processors.HookTriggers) and event types.
	On  []string
	URL string
	// MinFailureRate is the failure rate from which expectation_failed
	// fires (any failed row when 0).
	MinFailureRate float64
	// Headers are sent with each delivery; values may name secrets as
	// ${env:NAME}, resolved when the pipeline loads.
	Headers map[string]string
	// Retries after the first try (5 when 0).
	Retries int
}

var hookFields = []string{"name", "on", "url", "min_failure_rate", "headers", "retries"}

// eventHooks reads the event_hooks list.
func (pr *projectReader) eventHooks(v *yaml.Node) []EventHook {
	if v.Kind != yaml.SequenceNode {
		pr.add(pr.errAt(v.Line, v.Column, "event_hooks must be a list of hooks ({name, on, url, ...}), not %s", describe(v)))
		return nil
	}
	var hooks []EventHook
	names := map[string]bool{}
	for _, item := range v.Content {
		if item.Kind != yaml.MappingNode {
			pr.add(pr.errAt(item.Line, item.Column, "an event hook is a mapping {name, on, url, ...}, not %s", describe(item)))
			continue
		}
		var h EventHook
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, val := item.Content[i], item.Content[i+1]
			switch k.Value {
			case "name":
				h.Name = pr.str(k, val)
			case "url":
				h.URL = pr.str(k, val)
			case "on":
				if val.Kind != yaml.SequenceNode {
					pr.add(pr.errAt(val.Line, val.Column, "on must be a list, as [update_failed, flow_failed], not %s", describe(val)))
					continue
				}
				for _, o := range val.Content {
					h.On = append(h.On, pr.str(k, o))
				}
			case "min_failure_rate":
				if val.Kind != yaml.ScalarNode || val.Decode(&h.MinFailureRate) != nil || h.MinFailureRate < 0 || h.MinFailureRate > 1 {
					pr.add(pr.errAt(val.Line, val.Column, "min_failure_rate must be a number from 0 to 1, not %s", describe(val)))
				}
			case "retries":
				h.Retries = pr.positive(k, val)
			case "headers":
				h.Headers = pr.configuration(val)
			default:
				pr.add(pr.errAt(k.Line, k.Column, "an event hook has no field %q%s", k.Value, didYouMean(k.Value, hookFields)).
					WithHint("an event hook's fields are: " + strings.Join(hookFields, ", ")))
			}
		}
		switch {
		case h.Name == "":
			pr.add(pr.errAt(item.Line, item.Column, "an event hook needs a name"))
		case names[h.Name]:
			pr.add(pr.errAt(item.Line, item.Column, "two event hooks are named %q", h.Name))
		case !strings.HasPrefix(h.URL, "http://") && !strings.HasPrefix(h.URL, "https://"):
			pr.add(pr.errAt(item.Line, item.Column, "event hook %q needs a url, http:// or https://", h.Name))
		}
		names[h.Name] = true
		hooks = append(hooks, h)
	}
	return hooks
}

// projectReader collects the problems of one settings file.
type projectReader struct {
	file, rel string
	problems  domain.Problems
}

func (pr *projectReader) add(e *domain.Error) { pr.problems = append(pr.problems, e) }

func (pr *projectReader) errAt(line, col int, format string, args ...any) *domain.Error {
	where := pr.rel
	if line > 0 {
		where += ":" + strconv.Itoa(line)
	}
	e := domain.Errorf(domain.CodePipelineConfigInvalid, "%s: %s", where, fmt.Sprintf(format, args...))
	return e.At(filepath.Base(pr.file), line, col) // relative to the pipeline directory, as the .sql files are
}

func (pr *projectReader) str(k, v *yaml.Node) string {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		pr.add(pr.errAt(v.Line, v.Column, "%s must be a string, not %s", k.Value, describe(v)).
			WithHint("quote the value: " + k.Value + ": \"...\""))
		return ""
	}
	return v.Value
}

func (pr *projectReader) boolean(k, v *yaml.Node) bool {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
		pr.add(pr.errAt(v.Line, v.Column, "%s must be true or false, not %s", k.Value, describe(v)))
		return false
	}
	var b bool
	_ = v.Decode(&b)
	return b
}

func (pr *projectReader) positive(k, v *yaml.Node) int {
	var n int
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Decode(&n) != nil || n < 1 {
		pr.add(pr.errAt(v.Line, v.Column, "%s must be a whole number of at least 1, not %s", k.Value, describe(v)))
		return 0
	}
	return n
}

func (pr *projectReader) configuration(v *yaml.Node) map[string]string {
	if v.Kind != yaml.MappingNode {
		pr.add(pr.errAt(v.Line, v.Column, "configuration must be a mapping of names to strings, not %s", describe(v)))
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			pr.add(pr.errAt(k.Line, k.Column, "a configuration key must be a string, not %s", describe(k)))
			continue
		}
		if _, dup := out[k.Value]; dup {
			pr.add(pr.errAt(k.Line, k.Column, "configuration key %q is given twice", k.Value))
			continue
		}
		if val.Kind != yaml.ScalarNode || val.Tag != "!!str" {
			e := pr.errAt(val.Line, val.Column, "configuration value of %q must be a string, not %s", k.Value, describe(val))
			if val.Kind == yaml.ScalarNode {
				e.WithHint(fmt.Sprintf("quote the value: %s: \"%s\"", k.Value, val.Value))
			}
			pr.add(e)
			continue
		}
		out[k.Value] = val.Value
	}
	return out
}

// libraries resolves the libraries list (nil: every .sql file under dir
// outside storage) into sorted absolute paths.
func (pr *projectReader) libraries(dir, storage string, v *yaml.Node) []string {
	files := map[string]bool{}
	if v == nil {
		for _, f := range pr.glob(dir, storage, "**/*.sql", 0, 0, false) {
			files[f] = true
		}
		return sortedSet(files)
	}
	if v.Kind != yaml.SequenceNode {
		pr.add(pr.errAt(v.Line, v.Column, "libraries must be a list of `- glob: {include: PATTERN}` or `- file: {path: PATH}`, not %s", describe(v)))
		return nil
	}
	for _, item := range v.Content {
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 {
			pr.add(pr.errAt(item.Line, item.Column, "a library is `glob: {include: PATTERN}` or `file: {path: PATH}`, not %s", describe(item)))
			continue
		}
		k, body := item.Content[0], item.Content[1]
		var field string
		switch k.Value {
		case "glob":
			field = "include"
		case "file":
			field = "path"
		default:
			pr.add(pr.errAt(k.Line, k.Column, "unknown library kind %q%s", k.Value, didYouMean(k.Value, []string{"glob", "file"})).
				WithHint("a library is `glob: {include: PATTERN}` or `file: {path: PATH}`"))
			continue
		}
		val := pr.onlyField(k.Value, field, body)
		if val == nil {
			continue
		}
		if k.Value == "file" {
			path := resolve(dir, val.Value)
			info, err := os.Stat(path)
			if err != nil || info.IsDir() {
				pr.add(pr.libraryErr(val, "library file %q does not exist", val.Value))
				continue
			}
			files[path] = true
			continue
		}
		pattern := val.Value
		if strings.HasSuffix(pattern, "/") {
			pattern += "**"
		}
		for _, f := range pr.glob(dir, storage, pattern, val.Line, val.Column, true) {
			files[f] = true
		}
	}
	return sortedSet(files)
}

// onlyField checks that body is a mapping holding exactly one string field
// named field, and returns its value node.
func (pr *projectReader) onlyField(kind, field string, body *yaml.Node) *yaml.Node {
	usage := fmt.Sprintf("%s: {%s: ...}", kind, field)
	if body.Kind != yaml.MappingNode {
		pr.add(pr.errAt(body.Line, body.Column, "%s takes a mapping with %s (%s), not %s", kind, field, usage, describe(body)))
		return nil
	}
	var val *yaml.Node
	for i := 0; i+1 < len(body.Content); i += 2 {
		k := body.Content[i]
		if k.Value != field {
			pr.add(pr.errAt(k.Line, k.Column, "unknown field %q in %s%s", k.Value, kind, didYouMean(k.Value, []string{field})).WithHint("write " + usage))
			continue
		}
		val = body.Content[i+1]
	}
	if val == nil {
		if len(pr.problems) == 0 || pr.problems[len(pr.problems)-1].Line != body.Line {
			pr.add(pr.errAt(body.Line, body.Column, "%s has no %s", kind, field).WithHint("write " + usage))
		}
		return nil
	}
	if val.Kind != yaml.ScalarNode || val.Tag != "!!str" || val.Value == "" {
		pr.add(pr.errAt(val.Line, val.Column, "%s.%s must be a non-empty string, not %s", kind, field, describe(val)))
		return nil
	}
	return val
}

func (pr *projectReader) libraryErr(at *yaml.Node, format string, args ...any) *domain.Error {
	e := pr.errAt(at.Line, at.Column, format, args...)
	e.Code, e.Hint = domain.CodeLibraryNotFound, domain.CodeHint(domain.CodeLibraryNotFound)
	return e
}

// glob returns the .sql files under dir matching pattern (relative to dir,
// slash-separated, ** for any depth), outside storage. When must is set (a
// glob of pipeline.yaml), a pattern matching no .sql file is a problem;
// otherwise (the default libraries) hidden files and directories are left out.
func (pr *projectReader) glob(dir, storage, pattern string, line, col int, must bool) []string {
	if !doublestar.ValidatePattern(pattern) {
		pr.add(pr.errAt(line, col, "glob pattern %q is not valid", pattern).WithHint("see the glob syntax: * within a name, ** across directories, {a,b}, [abc]"))
		return nil
	}
	fsys := os.DirFS(dir)
	var out []string
	err := doublestar.GlobWalk(fsys, filepath.ToSlash(pattern), func(p string, d fs.DirEntry) error {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if within(abs, storage) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !must && hidden(p) {
			return nil // the default takes no file of .git, .venv, ...
		}
		if !d.IsDir() && strings.HasSuffix(strings.ToLower(p), ".sql") {
			out = append(out, abs)
		}
		return nil
	}, doublestar.WithFilesOnly(), doublestar.WithNoFollow())
	if err != nil {
		pr.add(pr.errAt(line, col, "reading the files of glob %q: %v", pattern, err))
		return nil
	}
	if must && len(out) == 0 {
		e := pr.errAt(line, col, "glob %q matches no .sql file under %s", pattern, dir)
		e.Code = domain.CodeLibraryNotFound
		e.Hint = domain.CodeHint(domain.CodeLibraryNotFound)
		pr.add(e)
	}
	return out
}

// hidden reports whether a slash-separated path has a part starting with ".".
func hidden(p string) bool {
	for _, part := range strings.Split(p, "/") {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

// within reports whether path is dir or under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, filepath.FromSlash(p))
}

// relName is file relative to the working directory when it is below it, for
// messages; the absolute path otherwise.
func relName(dir, file string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, file); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return file
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
}

// describe says what a node is, for messages: `the number 5`, `a list`.
func describe(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return "a " + kindName(n)
	}
	switch n.Tag {
	case "!!int", "!!float":
		return "the number " + n.Value
	case "!!bool":
		return "the boolean " + n.Value
	case "!!null":
		return "an empty value"
	case "!!str":
		return strconv.Quote(n.Value)
	}
	return n.Value
}

// yamlErrorLine finds the line in a yaml.v3 syntax error ("yaml: line 3: ...").
func yamlErrorLine(msg string) int {
	i := strings.Index(msg, "line ")
	if i < 0 {
		return 0
	}
	j := i + len("line ")
	k := j
	for k < len(msg) && msg[k] >= '0' && msg[k] <= '9' {
		k++
	}
	n, _ := strconv.Atoi(msg[j:k])
	return n
}

// didYouMean suggests the nearest of names to s, as " (did you mean x?)".
func didYouMean(s string, names []string) string {
	if best := suggest.Closest(s, names); best != "" {
		return " (did you mean " + best + "?)"
	}
	return ""
}
