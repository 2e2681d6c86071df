package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// served runs a pipeline of 25 rows (5 micro-batches) into a store and
// serves it.
func served(t *testing.T) (*eventstore.Store, *httptest.Server) {
	t.Helper()
	store, err := eventstore.Open(t.TempDir(), eventstore.WithSyncWrites(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p := pipeline.New("served")
	p.CreateStreamingTable("numbers")
	p.AppendFlow("numbers", pipeline.StreamFrom(sources.Range(0, 25)), pipeline.Name("count"))
	res, err := p.Run(context.Background(), store, processors.Options{Limit: domain.ReadLimit{MaxRows: 5}})
	if err != nil || res.State != domain.UpdateCompleted {
		t.Fatalf("update %v: %v", res, err)
	}
	srv := httptest.NewServer(New(store, "served", zerolog.Nop()).Handler())
	t.Cleanup(srv.Close)
	return store, srv
}

func get(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestEndpoints(t *testing.T) {
	store, srv := served(t)
	last := store.LastSeq()
	tests := []struct {
		path   string
		status int
		check  func(body string, h http.Header) error
	}{
		{"/api/health", 200, contains(`"status":"ok"`, fmt.Sprintf(`"last_seq":%d`, last))},
		{"/api/status", 200, contains(`"state":"COMPLETED"`, `"name":"count"`, `"rows":25`, `"batches":5`)},
		{"/api/events?type=batch_committed", 200, linesOf(5, `"event_type":"batch_committed"`)},
		{"/api/events?type=batch_committed&since=" + fmt.Sprint(last-3), 200, func(body string, _ http.Header) error {
			if n := strings.Count(body, "\n"); n > 2 {
				return fmt.Errorf("%d events after %d", n, last-3)
			}
			return nil
		}},
		{"/api/events?update=last&type=update_progress", 200, contains(`"state":"COMPLETED"`)},
		{"/api/events?type=nope", 400, contains(`"code":"INVALID_PARAMETER_VALUE"`, "unknown event type")},
		{"/api/events?update=zzz", 400, contains("EVENT_NOT_FOUND")},
		{"/api/tables", 200, contains(`"numbers"`)},
		{"/api/tables/numbers", 200, contains(`"name":"numbers"`, `"schema"`)},
		{"/api/tables/nope", 404, contains("TABLE_OR_VIEW_NOT_FOUND")},
		{"/api/tables/numbers/rows", 200, linesOf(25, `{"id":`)},
		{"/api/tables/numbers/rows?limit=10", 200, func(body string, h http.Header) error {
			if n := strings.Count(body, "\n"); n != 10 || h.Get("X-Next-Cursor") != "10" {
				return fmt.Errorf("%d rows, next cursor %q", n, h.Get("X-Next-Cursor"))
			}
			return nil
		}},
		{"/api/tables/numbers/rows?limit=10&cursor=20", 200, func(body string, h http.Header) error {
			if n := strings.Count(body, "\n"); n != 5 || h.Get("X-Next-Cursor") != "" {
				return fmt.Errorf("%d rows, next cursor %q", n, h.Get("X-Next-Cursor"))
			}
			return nil
		}},
		{"/api/tables/numbers/rows?as_of=1", 200, linesOf(0, "")},
		{"/api/tables/numbers/rows?as_of=nope", 400, contains("as_of")},
		{"/metrics", 200, contains(`sluice_flow_rows_total{pipeline="served",flow="count"} 25`, "# TYPE sluice_log_last_seq gauge",
			`sluice_flow_batch_seconds{pipeline="served",flow="count"}`, `sluice_flow_commit_lag_seconds{pipeline="served",flow="count"}`)},
		{"/api/pipeline", 200, contains(`"flows":[{"name":"count","kind":"flow","status":"COMPLETED"}]`, `"datasets":[{"name":"numbers","kind":"streaming table"}]`,
			`{"from":"f:count","to":"d:numbers","kind":"data"}`)},
		{"/api/updates", 200, contains(`"state":"COMPLETED"`, `"cause":"api_call"`)},
		{"/api/updates/last", 200, contains(`"state":"COMPLETED"`, `"rows":25`, `"last_batch_seconds"`)},
		{"/api/updates/nope", 404, contains("EVENT_NOT_FOUND")},
		{"/api/quality", 200, contains(`"expectations":[]`)},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := get(t, srv.URL+tc.path)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if err := tc.check(body, resp.Header); err != nil {
				t.Errorf("%v\n%s", err, body)
			}
		})
	}
}

func contains(parts ...string) func(string, http.Header) error {
	return func(body string, _ http.Header) error {
		for _, p := range parts {
			if !strings.Contains(body, p) {
				return fmt.Errorf("no %s", p)
			}
		}
		return nil
	}
}

func linesOf(n int, each string) func(string, http.Header) error {
	return func(body string, _ http.Header) error {
		lines := strings.Split(strings.TrimSpace(body), "\n")
		if body == "" {
			lines = nil
		}
		if len(lines) != n {
			return fmt.Errorf("%d lines, want %d", len(lines), n)
		}
		for _, l := range lines {
			if !strings.Contains(l, each) {
				return fmt.Errorf("line %s has no %s", l, each)
			}
		}
		return nil
	}
}

// TestStreamResumes: the event stream sends the events after
// Last-Event-ID, then those committed later, each once, in order.
func TestStreamResumes(t *testing.T) {
	store, srv := served(t)
	from := store.LastSeq() - 2
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/events/stream", nil)
	req.Header.Set("Last-Event-ID", fmt.Sprint(from))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	ids := make(chan uint64, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var id uint64
			if _, err := fmt.Sscanf(sc.Text(), "id: %d", &id); err == nil {
				ids <- id
			}
		}
		close(ids)
	}()
	// a new event after the stream started
	if _, err := store.Append(context.Background(), &domain.Event{Type: domain.EventPlanningInformation, Level: domain.LevelInfo, Message: "later",
		Details: domain.Details{PlanningInformation: &domain.PlanningInformation{}}}); err != nil {
		t.Fatal(err)
	}
	want := []uint64{from + 1, from + 2, from + 3}
	for _, w := range want {
		select {
		case got := <-ids:
			if got != w {
				t.Fatalf("event %d, want %d", got, w)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no event %d", w)
		}
	}
}

// TestSocketIsPrivate: the socket is this user's only, and a stale one is
// replaced.
func TestSocketIsPrivate(t *testing.T) {
	dir, err := os.MkdirTemp("", "sock")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(SocketPath(dir), nil, 0o644); err != nil { // stale
		t.Fatal(err)
	}
	l, err := ListenSocket(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	info, err := os.Stat(filepath.Join(dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode()&os.ModeSocket == 0 || info.Mode().Perm() != 0o600 {
		t.Errorf("the socket is %v, want a socket of mode 0600", info.Mode())
	}
	if _, err := ListenSocket(strings.Repeat("d", 120)); domain.CodeOf(err) != domain.CodeStoreIO {
		t.Errorf("a socket path too long: %v", err)
	}
}

// TestGuard: on loopback reads need no token and changes do; beyond
// loopback every request does.
func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	tests := []struct {
		loopback bool
		method   string
		auth     string
		want     int
	}{
		{true, "GET", "", http.StatusTeapot},
		{true, "POST", "", http.StatusUnauthorized},
		{true, "POST", "Bearer nope", http.StatusUnauthorized},
		{true, "POST", "Bearer tok", http.StatusTeapot},
		{false, "GET", "", http.StatusUnauthorized},
		{false, "GET", "Bearer tok", http.StatusTeapot},
		{false, "GET", "tok", http.StatusUnauthorized},
	}
	for _, tc := range tests {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tc.method, "/api/status", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		Guard(ok, "tok", tc.loopback).ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("loopback %v, %s with %q: %d, want %d", tc.loopback, tc.method, tc.auth, rec.Code, tc.want)
		}
	}
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "localhost:80": true, "0.0.0.0:80": false, "10.0.0.1:80": false, "nonsense": false} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v", addr, got)
		}
	}
}

// TestStreamFromTheStart: without Last-Event-ID or since, the stream
// starts at the log's first event; two followers get every event, through
// one read of the log.
func TestStreamFromTheStart(t *testing.T) {
	store, srv := served(t)
	last := store.LastSeq()
	read := func() []uint64 {
		resp, err := http.Get(srv.URL + "/api/events/stream")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ids []uint64
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() && uint64(len(ids)) < last {
			var id uint64
			if _, err := fmt.Sscanf(sc.Text(), "id: %d", &id); err == nil {
				ids = append(ids, id)
			}
		}
		return ids
	}
	for range 2 {
		ids := read()
		for i, id := range ids {
			if id != uint64(i+1) {
				t.Fatalf("the stream gave %v", ids)
			}
		}
		if uint64(len(ids)) != last {
			t.Fatalf("%d events, want %d", len(ids), last)
		}
	}
}
