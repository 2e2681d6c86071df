package main

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	numFiles    = 200
	rowsPerFile = 520 // 104,000 rows in all
)

// TestCrashRecovery kills a running pipeline with SIGKILL at random moments,
// restarts it until an update completes, and checks that every table holds
// each input row exactly once and that every delivery of a foreachBatch batch
// id carried the same rows.
func TestCrashRecovery(t *testing.T) {
	trials := 50
	if testing.Short() {
		trials = 5
	}
	dir := t.TempDir()
	child := filepath.Join(dir, "crashchild")
	build := exec.Command("go", "build", "-o", child, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the child: %v\n%s", err, out)
	}
	input := filepath.Join(dir, "input")
	writeInput(t, input)

	// Clean runs set the scale of the kill delays: the fastest of three, so
	// that a run slowed by a busy moment does not make the delays overshoot.
	full := time.Duration(math.MaxInt64)
	for i := 0; i < 3; i++ {
		start := time.Now()
		if out, err := runChild(child, input, filepath.Join(dir, fmt.Sprintf("calibrate-%d", i))).CombinedOutput(); err != nil {
			t.Fatalf("clean run: %v\n%s", err, out)
		}
		full = min(full, time.Since(start))
	}
	t.Logf("a clean run takes %s", full)

	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	kills := 0
	for trial := 0; trial < trials; trial++ {
		base := filepath.Join(dir, fmt.Sprintf("trial-%02d", trial))
		// The trial's input directory starts with half the files; the other
		// half lands after the first attempt, so restarts also meet files
		// that arrived since the last run.
		landing := filepath.Join(base, "input")
		landFiles(t, input, landing, 0, numFiles/2)
		landed := false
		for attempt := 0; ; attempt++ {
			if attempt > 200 {
				t.Fatalf("trial %d: no update completed in 200 attempts", trial)
			}
			if attempt == 1 {
				landFiles(t, input, landing, numFiles/2, numFiles)
				landed = true
			}
			cmd := runChild(child, landing, base)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			delay := time.Duration(rng.Int63n(int64(full)))
			if attempt >= 20 {
				delay = time.Hour // a trial that keeps being killed early finishes unkilled
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("trial %d attempt %d: the child failed on its own: %v\n%s", trial, attempt, err, stderr.String())
				}
			case <-time.After(delay):
				_ = cmd.Process.Signal(syscall.SIGKILL)
				err := <-exited
				var ee *exec.ExitError
				if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() {
					kills++
					continue
				}
				if err != nil {
					t.Fatalf("trial %d attempt %d: %v\n%s", trial, attempt, err, stderr.String())
				}
			}
			if !landed {
				continue // completed before the second half landed: run again
			}
			break // completed with every file
		}
		verify(t, child, base)
	}
	t.Logf("%d trials, %d kills", trials, kills)
	if kills < trials/2 {
		t.Errorf("only %d kills in %d trials: the delays miss the run", kills, trials)
	}
}

// landFiles links the input files [from, to) into dir, as a writer that
// renames complete files into place would.
func landFiles(t *testing.T, input, dir string, from, to int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for f := from; f < to; f++ {
		name := fmt.Sprintf("part-%04d.json", f)
		if err := os.Link(filepath.Join(input, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func runChild(child, input, base string) *exec.Cmd {
	return exec.Command(child, "-input", input, "-storage", filepath.Join(base, "store"), "-deliveries", filepath.Join(base, "deliveries"))
}

func writeInput(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id := 0
	for f := 0; f < numFiles; f++ {
		var b strings.Builder
		for r := 0; r < rowsPerFile; r++ {
			fmt.Fprintf(&b, `{"id": %d, "user": "user-%d", "event": "click", "amount": %d.25, "ts": "2026-01-02T03:04:05Z", "ok": %t}`+"\n",
				id, id%97, id%1000, id%2 == 0)
			id++
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%04d.json", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func verify(t *testing.T, child, base string) {
	t.Helper()
	const total = numFiles * rowsPerFile
	out, err := exec.Command(child, "-check", "-storage", filepath.Join(base, "store")).Output()
	if err != nil {
		t.Fatalf("%s: checking the store: %v", base, err)
	}
	tables := 0
	want := expectedCDC()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		table, list, _ := strings.Cut(line, " ")
		if table == "cdc" {
			table, list, _ = strings.Cut(list, " ")
			if list != want[table] {
				t.Errorf("%s: AUTO CDC table %s is not the fold of the changes:\n got %.300s\nwant %.300s", base, table, list, want[table])
			}
		} else if table == "dedup" {
			// every pair once, by its first (even) id
			ids := parseIDs(t, list)
			for i := range ids {
				if ids[i]%2 != 0 {
					t.Errorf("%s: dedup kept odd id %d, the second of its pair", base, ids[i])
					break
				}
				ids[i] /= 2
			}
			checkExactlyOnce(t, base+" table dedup (by pair)", ids, total/2)
		} else {
			checkExactlyOnce(t, base+" table "+table, parseIDs(t, list), total)
		}
		tables++
	}
	if tables != 5 {
		t.Fatalf("%s: the check printed %d tables, want 5:\n%s", base, tables, out)
	}

	// Deliveries: the same batch id always carried the same rows, and the
	// distinct batches carried every row once.
	f, err := os.Open(filepath.Join(base, "deliveries"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byID := map[int64]string{}
	redelivered := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		// "batch_id crc32 ids": a line without a valid checksum was torn by a
		// kill; that delivery did not return and was made again.
		parts := strings.SplitN(sc.Text(), " ", 3)
		if len(parts) != 3 {
			continue
		}
		n, err1 := strconv.ParseInt(parts[0], 10, 64)
		sum, err2 := strconv.ParseUint(parts[1], 16, 32)
		rows := parts[2]
		if err1 != nil || err2 != nil || crc32.ChecksumIEEE([]byte(rows)) != uint32(sum) {
			continue
		}
		if prev, seen := byID[n]; seen {
			redelivered++
			if prev != rows {
				t.Errorf("%s: batch %d delivered with different rows", base, n)
			}
			continue
		}
		byID[n] = rows
	}
	if redelivered > 0 {
		t.Logf("%s: %d batches delivered more than once, each with the same rows", base, redelivered)
	}
	var all []int64
	for id := int64(0); id < int64(len(byID)); id++ {
		rows, ok := byID[id]
		if !ok {
			t.Fatalf("%s: batch ids are not contiguous: %d missing of %d", base, id, len(byID))
		}
		all = append(all, parseIDs(t, rows)...)
	}
	checkExactlyOnce(t, base+" foreachBatch deliveries", all, total)
}

func parseIDs(t *testing.T, list string) []int64 {
	t.Helper()
	if list == "" {
		return nil
	}
	var out []int64
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("bad id %q", s)
		}
		out = append(out, v)
	}
	return out
}

func checkExactlyOnce(t *testing.T, what string, ids []int64, total int) {
	t.Helper()
	slices.Sort(ids)
	if len(ids) != total {
		t.Errorf("%s: %d rows, want %d", what, len(ids), total)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Errorf("%s: row %d twice", what, ids[i])
			return
		}
	}
	if len(ids) > 0 && (ids[0] != 0 || ids[len(ids)-1] != int64(total-1)) {
		t.Errorf("%s: ids run from %d to %d", what, ids[0], ids[len(ids)-1])
	}
}

// expectedCDC folds the input's changes as the child's AUTO CDC flows
// declare them (key user, sequence (id * 7919) % 104000, a delete when the
// row is not ok and its id a multiple of 5) and renders the tables as the
// child prints them: scd1 stores user and id, scd2 user and amount.
func expectedCDC() map[string]string {
	const total = numFiles * rowsPerFile
	type change struct {
		id, seq int64
		del     bool
	}
	byUser := map[int64][]change{}
	for id := int64(0); id < total; id++ {
		byUser[id%97] = append(byUser[id%97], change{id: id, seq: (id * 7919) % 104000, del: id%2 != 0 && id%5 == 0})
	}
	users := make([]string, 0, 97)
	for u := range byUser {
		users = append(users, fmt.Sprintf("user-%d", u))
	}
	slices.Sort(users) // the tables' key order: user names as strings
	var one, two []string
	for _, name := range users {
		u, _ := strconv.ParseInt(strings.TrimPrefix(name, "user-"), 10, 64)
		cs := byUser[u]
		slices.SortFunc(cs, func(a, b change) int { return int(a.seq - b.seq) })
		if last := cs[len(cs)-1]; !last.del {
			one = append(one, fmt.Sprintf("%s=%d", name, last.id))
		}
		amount := func(id int64) string { return strconv.FormatFloat(float64(id%1000)+0.25, 'f', 2, 64) }
		var versions []string
		open, start := int64(-1), int64(0)
		closeAt := func(end string) {
			versions = append(versions, fmt.Sprintf("%s@%d-%s=%s", name, start, end, amount(open)))
		}
		for _, c := range cs {
			switch {
			case c.del:
				if open >= 0 {
					closeAt(strconv.FormatInt(c.seq, 10))
					open = -1
				}
			case open >= 0 && open%1000 == c.id%1000:
				open = c.id // the same amount: the version is updated in place
			default:
				if open >= 0 {
					closeAt(strconv.FormatInt(c.seq, 10))
				}
				open, start = c.id, c.seq
			}
		}
		if open >= 0 {
			closeAt("")
		}
		two = append(two, versions...)
	}
	return map[string]string{"scd1": strings.Join(one, ";"), "scd2": strings.Join(two, ";")}
}
