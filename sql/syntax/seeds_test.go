package syntax

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedPipelines parses, verbatim, every SQL pipeline statement of the
// reference pages in ../shared/seeds. The pages are read where they are, not
// copied into the project; the test is skipped when they are absent.
func TestSeedPipelines(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "seeds")
	pages, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	if len(pages) == 0 {
		t.Skip("no reference pages in " + dir)
	}
	conf := map[string]string{"source_catalog": "main"}
	n := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range sqlBlocks(string(b)) {
			n++
			f, err := ParseFile(filepath.Base(page), block.text, conf)
			if err != nil {
				t.Errorf("%s (line %d): %v", page, block.line, err)
				continue
			}
			checkRoundTrip(t, page, f)
		}
	}
	if n == 0 {
		t.Fatal("no SQL found in the reference pages")
	}
}

type sqlBlock struct {
	line int
	text string
}

// sqlBlocks extracts the SQL statements of a page: from a line starting with
// CREATE, APPLY CHANGES or SELECT (after a blank line) to the line ending
// with ";". Leading lines are kept blank so line numbers stay the page's.
func sqlBlocks(page string) []sqlBlock {
	lines := strings.Split(page, "\n")
	var out []sqlBlock
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		start := strings.HasPrefix(l, "CREATE ") || strings.HasPrefix(l, "APPLY CHANGES") || strings.HasPrefix(l, "SELECT ")
		if !start || (i > 0 && strings.TrimSpace(lines[i-1]) != "" && !strings.HasPrefix(strings.TrimSpace(lines[i-1]), "--")) {
			continue
		}
		j := i
		for j < len(lines) && !strings.HasSuffix(strings.TrimSpace(lines[j]), ";") {
			j++
		}
		if j == len(lines) {
			break
		}
		text := strings.Repeat("\n", i) + strings.Join(lines[i:j+1], "\n")
		out = append(out, sqlBlock{line: i + 1, text: text})
		i = j
	}
	return out
}

func TestSeedBlocksFound(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "seeds", "best-practices.pt.txt"))
	if err != nil {
		t.Skip("reference pages absent")
	}
	if got := len(sqlBlocks(string(b))); got < 7 {
		t.Errorf("found %d SQL blocks in best-practices.pt.txt, want at least 7", got)
	}
}
