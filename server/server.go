// Package server serves the store a process holds: the pipeline's status,
// its event log (and a follow stream of it), its tables, and metrics, as
// JSON over HTTP, on a Unix socket in the storage directory and, when
// asked, on a TCP address. The command line reads through it when another
// process holds the store (sluice events, table, status while sluice run
// runs).
package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
)

// SocketName is the API's Unix socket in the storage directory.
const SocketName = "sluice.sock"

// SocketPath is the API's socket of a storage directory.
func SocketPath(storage string) string { return filepath.Join(storage, SocketName) }

// Server serves one store.
type Server struct {
	store    *eventstore.Store
	pipeline string
	log      zerolog.Logger
	started  time.Time
	updater  Updater
	hub      *hub

	statusMu    sync.Mutex
	statusCache *statusReader
}

// New makes the server of a store a process holds.
func New(store *eventstore.Store, pipeline string, log zerolog.Logger) *Server {
	return &Server{store: store, pipeline: pipeline, log: log, started: time.Now(), hub: newHub(store)}
}

// Handler routes the API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/health", s.health)
	mux.HandleFunc("GET /api/status", s.status)
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("GET /api/events/stream", s.stream)
	mux.HandleFunc("GET /api/tables", s.tables)
	mux.HandleFunc("GET /api/tables/{name}", s.table)
	mux.HandleFunc("GET /api/tables/{name}/rows", s.rows)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("POST /api/updates", s.startUpdate)
	mux.HandleFunc("POST /api/updates/cancel", s.cancelUpdate)
	mux.HandleFunc("GET /api/updates", s.updates)
	mux.HandleFunc("GET /api/updates/{id}", s.update)
	mux.HandleFunc("GET /api/pipeline", s.pipelineGraph)
	mux.HandleFunc("GET /api/quality", s.quality)
	mux.HandleFunc("GET /api/openapi.json", s.openapi)
	s.uiRoutes(mux)
	return mux
}

// ListenSocket listens on the storage's socket, readable and writable by
// this user only. A socket a killed process left is replaced: the caller
// holds the store, so no other process serves it.
func ListenSocket(storage string) (net.Listener, error) {
	path := SocketPath(storage)
	if len(path) >= 108 {
		return nil, domain.Errorf(domain.CodeStoreIO, "the API's socket path %s is longer than a Unix socket path may be (107 bytes)", path).
			WithHint("move the storage to a shorter path (pipeline.yaml's storage)")
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, domain.Wrap(domain.CodeStoreIO, err, "removing the stale socket "+path)
	}
	old := syscallUmask(0o177) // created 0600, never briefly wider
	l, err := net.Listen("unix", path)
	syscallUmask(old)
	if err != nil {
		return nil, domain.Wrap(domain.CodeStoreIO, err, "listening on "+path)
	}
	return l, nil
}

// Serve serves the API on l until ctx ends; then it stops taking requests
// and ends the follow streams.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	return s.ServeHandler(ctx, l, s.Handler())
}

// ServeHandler serves h (the API, guarded for an HTTP listener) on l until
// ctx ends.
func (s *Server) ServeHandler(ctx context.Context, l net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, BaseContext: func(net.Listener) context.Context { return ctx }, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// apiError is the body of an error answer: the code, message and hint of a
// coded error.
type apiError struct {
	Error *domain.ErrorInfo `json:"error"`
}

func (s *Server) fail(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(apiError{Error: domain.ErrorInfoOf(err)})
}

func (s *Server) json(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	s.json(w, map[string]any{"status": "ok", "pipeline": s.pipeline, "last_seq": s.store.LastSeq(), "pid": os.Getpid(),
		"serving_since": s.started.UTC().Format(time.RFC3339)})
}

// Status is the pipeline's last update and its flows, as GET /api/status
// gives it.
type Status struct {
	Pipeline string       `json:"pipeline"`
	LastSeq  uint64       `json:"last_seq"`
	Update   *UpdateState `json:"update,omitempty"`
	Flows    []FlowState  `json:"flows"`
}

// UpdateState is an update's state.
type UpdateState struct {
	ID      string    `json:"id"`
	State   string    `json:"state"`
	Started time.Time `json:"started"`
}

// FlowState is a flow's state in an update: its last status and what it
// wrote.
type FlowState struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Rows    int64  `json:"rows"`
	Batches int64  `json:"batches"`
	// LastCommit is when its last micro-batch committed, and
	// LastBatchSeconds how long that micro-batch took from its plan to its
	// commit.
	LastCommit       time.Time `json:"last_commit,omitzero"`
	LastBatchSeconds float64   `json:"last_batch_seconds,omitempty"`
	planned          time.Time
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	st, err := s.readStatus(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	s.json(w, st)
}

// readStatus is ReadStatus read on from where the last call left it: a
// watcher asking every second reads each event once, not the whole update
// each time.
func (s *Server) readStatus(ctx context.Context) (*Status, error) {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	if s.statusCache == nil {
		s.statusCache = &statusReader{pipeline: s.pipeline}
	}
	return s.statusCache.read(ctx, s.store)
}

// ReadStatus reads the last update's state and its flows' from the log.
func ReadStatus(ctx context.Context, store *eventstore.Store, pipeline string) (*Status, error) {
	return (&statusReader{pipeline: pipeline}).read(ctx, store)
}

// statusReader folds the log into the status of its last update, from
// where it left off.
type statusReader struct {
	pipeline string
	only     string // the update to read; "" for the last
	upto     uint64 // events up to here are folded
	update   *UpdateState
	flows    map[string]*FlowState
}

func (sr *statusReader) read(ctx context.Context, store *eventstore.Store) (*Status, error) {
	last := store.LastSeq()
	if last > sr.upto {
		if err := sr.fold(ctx, store, sr.upto+1, last); err != nil {
			sr.upto, sr.update, sr.flows = 0, nil, nil // folded again next time
			return nil, err
		}
		sr.upto = last
	}
	st := &Status{Pipeline: sr.pipeline, LastSeq: last, Flows: []FlowState{}}
	if sr.update != nil {
		u := *sr.update
		st.Update = &u
	}
	for _, name := range slices.Sorted(maps.Keys(sr.flows)) {
		st.Flows = append(st.Flows, *sr.flows[name])
	}
	return st, nil
}

// fold takes the events from..to into the status. The batches' rows are
// counted from their details: a batch's event is read with its rows, so
// only a new update's batches are read, once.
func (sr *statusReader) fold(ctx context.Context, store *eventstore.Store, from, to uint64) error {
	err := store.Scan(ctx, eventstore.Filter{From: from, To: to, Types: []domain.EventType{domain.EventCreateUpdate}}, func(ev *domain.Event) error {
		if sr.only != "" && ev.Origin.UpdateID != sr.only {
			return nil
		}
		sr.update = &UpdateState{ID: ev.Origin.UpdateID, Started: ev.Timestamp.UTC()}
		sr.flows = map[string]*FlowState{}
		from = ev.Seq // the update's events start here
		return nil
	})
	if err != nil || sr.update == nil {
		return err
	}
	flows := sr.flows
	st := &Status{Update: sr.update}
	err = store.Scan(ctx, eventstore.Filter{From: from, To: to, Update: st.Update.ID, Types: []domain.EventType{domain.EventUpdateProgress, domain.EventFlowProgress, domain.EventBatchPlanned, domain.EventBatchCommitted}},
		func(ev *domain.Event) error {
			d := ev.Details
			switch {
			case d.UpdateProgress != nil:
				st.Update.State = string(d.UpdateProgress.State)
			case d.FlowProgress != nil:
				f := flows[ev.Origin.FlowName]
				if f == nil {
					f = &FlowState{Name: ev.Origin.FlowName}
					flows[f.Name] = f
				}
				f.Status = string(d.FlowProgress.Status)
			case d.BatchPlanned != nil:
				if f := flows[ev.Origin.FlowName]; f != nil {
					f.planned = ev.Timestamp
				}
			case d.BatchCommitted != nil:
				if f := flows[ev.Origin.FlowName]; f != nil {
					f.Rows += d.BatchCommitted.NumRows
					f.Batches++
					f.LastCommit = ev.Timestamp.UTC()
					if !f.planned.IsZero() {
						f.LastBatchSeconds = ev.Timestamp.Sub(f.planned).Seconds()
					}
				}
			}
			return nil
		})
	return err
}

// ReadUpdate reads an update's state and its flows' from the log.
func ReadUpdate(ctx context.Context, store *eventstore.Store, pipeline, id string) (*Status, error) {
	return (&statusReader{pipeline: pipeline, only: id}).read(ctx, store)
}

// UpdateInfo is an update as GET /api/updates lists it.
type UpdateInfo struct {
	ID      string    `json:"id"`
	State   string    `json:"state"`
	Cause   string    `json:"cause,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
}

// updates lists the updates, the latest first.
func (s *Server) updates(w http.ResponseWriter, r *http.Request) {
	list, err := s.updateList(r)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	s.json(w, map[string]any{"updates": list})
}

// update is one update and its flows.
func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	id, err := s.findUpdate(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, http.StatusNotFound, err)
		return
	}
	st, err := ReadUpdate(r.Context(), s.store, s.pipeline, id)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	s.json(w, st)
}

// pipelineGraph is the pipeline's datasets, flows (with their state in the
// last update) and edges, as the UI draws them.
func (s *Server) pipelineGraph(w http.ResponseWriter, r *http.Request) {
	st, err := s.readStatus(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	g, err := s.graph(r, st)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	type node struct {
		Name   string `json:"name"`
		Kind   string `json:"kind"`
		Status string `json:"status,omitempty"`
	}
	type edge struct {
		From string `json:"from"`
		To   string `json:"to"`
		Kind string `json:"kind"`
	}
	out := struct {
		Pipeline string `json:"pipeline"`
		Datasets []node `json:"datasets"`
		Flows    []node `json:"flows"`
		Edges    []edge `json:"edges"`
	}{Pipeline: s.pipeline, Datasets: []node{}, Flows: []node{}, Edges: []edge{}}
	for _, n := range g.Nodes {
		if n.Flow {
			out.Flows = append(out.Flows, node{n.Name, n.Kind, n.Status})
		} else {
			out.Datasets = append(out.Datasets, node{n.Name, n.Kind, ""})
		}
	}
	for _, e := range g.Edges {
		out.Edges = append(out.Edges, edge{e.From, e.To, e.Kind})
	}
	s.json(w, out)
}

// quality is the data quality of an update (update: an id, a prefix, or
// last, the default): an object per dataset and expectation, as sluice
// quality --format jsonl gives them.
func (s *Server) quality(w http.ResponseWriter, r *http.Request) {
	want := r.URL.Query().Get("update")
	if want == "" {
		want = "last"
	}
	id, err := s.findUpdate(r.Context(), want)
	if err != nil {
		s.fail(w, http.StatusNotFound, err)
		return
	}
	figures, err := UpdateQuality(r.Context(), s.store, id, r.URL.Query().Get("dataset"))
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	out := QualityLines(id, figures)
	s.json(w, map[string]any{"expectations": out})
}

// filterOf reads the event filters of a request: type (comma-separated),
// flow, dataset, update (an id, a prefix of one, or last), since (events
// after this seq), to.
func (s *Server) filterOf(r *http.Request) (eventstore.Filter, error) {
	q := r.URL.Query()
	f := eventstore.Filter{Flow: q.Get("flow"), Dataset: q.Get("dataset")}
	if u := q.Get("update"); u != "" {
		id, err := s.findUpdate(r.Context(), u)
		if err != nil {
			return f, err
		}
		f.Update = id
	}
	for _, t := range strings.Split(q.Get("type"), ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		if !slices.Contains(domain.EventTypes, domain.EventType(t)) {
			return f, domain.Errorf(domain.CodeInvalidParameterValue, "unknown event type %q", t).
				WithHint(fmt.Sprintf("the types are %v", domain.EventTypes))
		}
		f.Types = append(f.Types, domain.EventType(t))
	}
	for _, p := range []struct {
		name string
		to   *uint64
	}{{"since", &f.From}, {"to", &f.To}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return f, domain.Errorf(domain.CodeInvalidParameterValue, "%s must be an event seq, not %q", p.name, v)
			}
			*p.to = n
		}
	}
	if f.From > 0 {
		f.From++ // since is the last seq seen
	}
	return f, nil
}

// findUpdate resolves last, an update id or a unique prefix of one.
func (s *Server) findUpdate(ctx context.Context, want string) (string, error) {
	var ids []string
	err := s.store.Scan(ctx, eventstore.Filter{Types: []domain.EventType{domain.EventCreateUpdate}}, func(ev *domain.Event) error {
		ids = append(ids, ev.Origin.UpdateID)
		return nil
	})
	if err != nil {
		return "", err
	}
	if want == "last" && len(ids) > 0 {
		return ids[len(ids)-1], nil
	}
	var match []string
	for _, id := range ids {
		if strings.HasPrefix(id, want) {
			match = append(match, id)
		}
	}
	if len(match) != 1 {
		return "", domain.Errorf(domain.CodeEventNotFound, "%d updates match %q", len(match), want).
			WithHint("give an update id, a prefix of one, or last")
	}
	return match[0], nil
}

// events writes the events the filters match, one JSON object a line, up
// to the log's end when the request came.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	f, err := s.filterOf(r)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	if last := s.store.LastSeq(); f.To == 0 || f.To > last {
		f.To = last
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	out := bufio.NewWriterSize(w, 64<<10)
	if f.To >= max(f.From, 1) {
		err = s.store.Scan(r.Context(), f, func(ev *domain.Event) error {
			b, err := domain.EventJSON(ev)
			if err != nil {
				return err
			}
			_, err = out.Write(append(b, '\n'))
			return err
		})
	}
	if err != nil {
		s.log.Warn().Err(err).Msg("API: reading events")
	}
	_ = out.Flush()
}

// stream follows the log as server-sent events: each event a message
// whose id is its seq, from after since (or the Last-Event-ID a reconnect
// sends), with no gap and no repeat; a comment every 15 s keeps the
// connection open.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	f, err := s.filterOf(r)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			s.fail(w, http.StatusBadRequest, domain.Errorf(domain.CodeInvalidParameterValue, "Last-Event-ID must be an event seq, not %q", id))
			return
		}
		f.From = n + 1
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, http.StatusInternalServerError, errors.New("the connection cannot stream"))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	ctx := r.Context()
	write := func(msg []byte) bool {
		_, err := w.Write(msg)
		return err == nil
	}
	// the log up to where the hub hands out events, then the hub's
	sb, from := s.hub.join(f)
	defer s.hub.leave(sb)
	var last uint64 // the last event written
	if f.From > 0 {
		last = f.From - 1
	}
	if f.From < from {
		catchUp := f
		catchUp.To = from - 1
		if f.To != 0 && f.To < catchUp.To {
			catchUp.To = f.To
		}
		err := s.store.Scan(ctx, catchUp, func(ev *domain.Event) error {
			msg, err := sseOf(ev)
			if err != nil {
				return err
			}
			if !write(msg) {
				return ctx.Err()
			}
			last = ev.Seq
			return nil
		})
		if err != nil {
			return
		}
		flusher.Flush()
	}
	beat := time.NewTicker(15 * time.Second)
	defer beat.Stop()
	for {
		select {
		case msg := <-sb.out:
			if msg.seq <= last {
				continue
			}
			if f.To != 0 && msg.seq > f.To {
				return // the stream asked for ends there
			}
			if !write(msg.sse) {
				return
			}
			last = msg.seq
			if len(sb.out) == 0 {
				flusher.Flush()
			}
		case <-sb.dropped:
			// behind the hub: the rest of the buffer, then the log itself
			for len(sb.out) > 0 {
				msg := <-sb.out
				if msg.seq > last && !write(msg.sse) {
					return
				}
				last = max(last, msg.seq)
			}
			rest := f
			rest.From = last + 1
			err := s.store.Tail(ctx, rest, func(ev *domain.Event) error {
				msg, err := sseOf(ev)
				if err != nil {
					return err
				}
				if !write(msg) {
					return ctx.Err()
				}
				flusher.Flush()
				return nil
			})
			if err != nil && ctx.Err() == nil {
				s.log.Warn().Err(err).Msg("API: following events")
			}
			return
		case <-beat.C:
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
			flusher.Flush()
		case <-ctx.Done():
			return
		}
	}
}

// TableInfo is a table as GET /api/tables/{name} gives it.
type TableInfo struct {
	Name   string        `json:"name"`
	AsOf   uint64        `json:"as_of"`
	Schema domain.Schema `json:"schema"`
}

func (s *Server) tables(w http.ResponseWriter, r *http.Request) {
	names, err := StoredTables(r.Context(), s.store)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	s.json(w, map[string]any{"tables": names})
}

// StoredTables lists the stored tables the log defines, sorted.
func StoredTables(ctx context.Context, store *eventstore.Store) ([]string, error) {
	kinds := map[string]bool{}
	err := store.Scan(ctx, eventstore.Filter{Types: []domain.EventType{domain.EventDatasetDefinition}}, func(ev *domain.Event) error {
		if d := ev.Details.DatasetDefinition; d != nil {
			kinds[ev.Origin.DatasetName] = d.DatasetType.Stored()
		}
		return nil
	})
	var names []string
	for n, stored := range kinds {
		if stored {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, err
}

// asOf reads as_of, an event seq (0: the log's end when asked).
func (s *Server) asOf(r *http.Request) (uint64, error) {
	v := r.URL.Query().Get("as_of")
	if v == "" {
		return s.store.LastSeq(), nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > s.store.LastSeq() {
		return 0, domain.Errorf(domain.CodeInvalidParameterValue, "as_of must be an event seq of the log (up to %d), not %q", s.store.LastSeq(), v)
	}
	return n, nil
}

func (s *Server) tableAt(w http.ResponseWriter, r *http.Request) (string, uint64, domain.Schema, bool) {
	name := r.PathValue("name")
	seq, err := s.asOf(r)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return "", 0, domain.Schema{}, false
	}
	names, err := StoredTables(r.Context(), s.store)
	if err == nil && !slices.Contains(names, name) {
		err = domain.Errorf(domain.CodeUnknownDataset, "%q is not a stored table of the pipeline", name).WithHint(fmt.Sprintf("the tables are %v", names))
		s.fail(w, http.StatusNotFound, err)
		return "", 0, domain.Schema{}, false
	}
	var schema *domain.Schema
	if err == nil {
		schema, err = processors.TableSchemaAt(r.Context(), s.store, name, seq)
	}
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return "", 0, domain.Schema{}, false
	}
	if schema == nil {
		schema = &domain.Schema{}
	}
	return name, seq, *schema, true
}

func (s *Server) table(w http.ResponseWriter, r *http.Request) {
	name, seq, schema, ok := s.tableAt(w, r)
	if ok {
		s.json(w, TableInfo{Name: name, AsOf: seq, Schema: schema})
	}
}

// rows writes a table's rows as of as_of, one JSON object a line, as
// sluice table --format jsonl does. With limit, at most limit rows from
// cursor (a row count, as_of fixed by the first page), and the header
// X-Next-Cursor when rows remain.
func (s *Server) rows(w http.ResponseWriter, r *http.Request) {
	name, seq, schema, ok := s.tableAt(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	var limit, skip int
	for _, p := range []struct {
		name string
		to   *int
	}{{"limit", &limit}, {"cursor", &skip}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				s.fail(w, http.StatusBadRequest, domain.Errorf(domain.CodeInvalidParameterValue, "%s must be a whole number, not %q", p.name, v))
				return
			}
			*p.to = n
		}
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-As-Of", strconv.FormatUint(seq, 10))
	var page []byte // with a limit the page is held, to say whether rows remain
	out := bufio.NewWriterSize(w, 64<<10)
	written := 0
	more, err := s.page(r, name, seq, schema, skip, limit, func(rows *domain.Batch, i int) error {
		line := appendRow(nil, rows, i)
		written++
		if limit > 0 {
			page = append(page, line...)
			return nil
		}
		_, err := out.Write(line)
		return err
	})
	if err != nil {
		if written == 0 {
			s.fail(w, http.StatusInternalServerError, err)
			return
		}
		s.log.Warn().Err(err).Str("table", name).Msg("API: reading rows")
	}
	if more {
		w.Header().Set("X-Next-Cursor", strconv.Itoa(skip+written))
	}
	_, _ = out.Write(page)
	_ = out.Flush()
}

// page calls each with a table's rows as of seq, in its schema, from row
// skip on, at most limit of them (0: all); more says whether rows remain.
func (s *Server) page(r *http.Request, name string, seq uint64, schema domain.Schema, skip, limit int, each func(*domain.Batch, int) error) (more bool, err error) {
	seen, taken := 0, 0
	errFull := errors.New("page full")
	err = processors.ScanTable(r.Context(), s.store, name, seq, func(b *domain.Batch) error {
		rows, err := domain.Concat(domain.NewBatch(schema, 0), b)
		if err != nil {
			return err
		}
		for i := range rows.Len() {
			if seen++; seen <= skip {
				continue
			}
			if limit > 0 && taken == limit {
				more = true
				return errFull
			}
			if err := each(rows, i); err != nil {
				return err
			}
			taken++
		}
		return nil
	})
	if err == errFull {
		err = nil
	}
	return more, err
}

// appendRow appends a row as a JSON object and a newline.
func appendRow(line []byte, rows *domain.Batch, i int) []byte {
	line = append(line, '{')
	for k, f := range rows.Schema.Fields {
		if k > 0 {
			line = append(line, ',')
		}
		line = domain.AppendJSONString(line, f.Name)
		line = append(line, ':')
		line = domain.AppendJSON(line, rows.Columns[k].Value(i), f.Type)
	}
	return append(line, '}', '\n')
}

// metrics writes the Prometheus text format: the log's length, and per
// flow of the last update its rows and batches.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	st, err := s.readStatus(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	out := bufio.NewWriter(w)
	defer out.Flush()
	fmt.Fprintf(out, "# HELP sluice_log_last_seq The seq of the last event in the log.\n# TYPE sluice_log_last_seq gauge\nsluice_log_last_seq %d\n", st.LastSeq)
	fmt.Fprintf(out, "# HELP sluice_flow_rows_total Rows the flow committed in the last update.\n# TYPE sluice_flow_rows_total counter\n")
	for _, f := range st.Flows {
		fmt.Fprintf(out, "sluice_flow_rows_total{pipeline=%q,flow=%q} %d\n", s.pipeline, f.Name, f.Rows)
	}
	fmt.Fprintf(out, "# HELP sluice_flow_batches_total Micro-batches the flow committed in the last update.\n# TYPE sluice_flow_batches_total counter\n")
	for _, f := range st.Flows {
		fmt.Fprintf(out, "sluice_flow_batches_total{pipeline=%q,flow=%q} %d\n", s.pipeline, f.Name, f.Batches)
	}
	fmt.Fprintf(out, "# HELP sluice_flow_batch_seconds How long the flow's last micro-batch took, from its plan to its commit.\n# TYPE sluice_flow_batch_seconds gauge\n")
	for _, f := range st.Flows {
		if f.Batches > 0 {
			fmt.Fprintf(out, "sluice_flow_batch_seconds{pipeline=%q,flow=%q} %g\n", s.pipeline, f.Name, f.LastBatchSeconds)
		}
	}
	fmt.Fprintf(out, "# HELP sluice_flow_commit_lag_seconds Time since the flow's last commit.\n# TYPE sluice_flow_commit_lag_seconds gauge\n")
	for _, f := range st.Flows {
		if !f.LastCommit.IsZero() {
			fmt.Fprintf(out, "sluice_flow_commit_lag_seconds{pipeline=%q,flow=%q} %g\n", s.pipeline, f.Name, time.Since(f.LastCommit).Seconds())
		}
	}
}
