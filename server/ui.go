package server

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// The web UI: pages rendered here from templates, refreshed in place by
// htmx (vendored into ui/static by npm run build in ui/, and embedded), so
// it works offline from the one binary.
//
//go:embed ui/templates/*.html ui/static/*
var uiFiles embed.FS

var uiFuncs = template.FuncMap{
	"short": func(id string) string { return id[:min(8, len(id))] },
	"time":  func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"took": func(start, end time.Time) string {
		if end.IsZero() {
			return "running"
		}
		return end.Sub(start).Round(time.Millisecond).String()
	},
	"rate":      func(r float64) string { return fmt.Sprintf("%.2f%%", 100*r) },
	"barHeight": func(r float64) int { return 2 + int(r*22) },
	"where": func(ev *domain.Event) string {
		if ev.Origin.FlowName != "" {
			return ev.Origin.FlowName
		}
		return ev.Origin.DatasetName
	},
}

// page is what every page's layout shows, and the page's own data.
type page struct {
	Title, Pipeline, Page string
	Data                  any
}

func (s *Server) uiRoutes(mux *http.ServeMux) {
	static, _ := fs.Sub(uiFiles, "ui/static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.uiPipeline)
	mux.HandleFunc("GET /ui/fragments/graph", s.uiFragment("graph", s.pipelineData))
	mux.HandleFunc("GET /ui/fragments/flows", s.uiFragment("flows", s.pipelineData))
	mux.HandleFunc("GET /ui/updates", s.uiUpdates)
	mux.HandleFunc("GET /ui/updates/{id}", s.uiUpdate)
	mux.HandleFunc("GET /ui/events", s.uiEvents)
	mux.HandleFunc("GET /ui/fragments/events", s.uiFragment("eventrows", s.eventsData))
	mux.HandleFunc("GET /ui/quality", s.uiQuality)
	mux.HandleFunc("GET /ui/tables", s.uiTables)
	mux.HandleFunc("GET /ui/tables/{name}", s.uiTables)
}

func parsePage(name string) *template.Template {
	return template.Must(template.New(name).Funcs(uiFuncs).ParseFS(uiFiles, "ui/templates/layout.html", "ui/templates/"+name+".html"))
}

var pages = map[string]*template.Template{}

func init() {
	for _, name := range []string{"pipeline", "updates", "update", "events", "quality", "tables"} {
		pages[name] = parsePage(name)
	}
}

func (s *Server) render(w http.ResponseWriter, name, title string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pages[name].ExecuteTemplate(w, "layout", page{Title: title, Pipeline: s.pipeline, Page: name, Data: data}); err != nil {
		s.log.Warn().Err(err).Str("page", name).Msg("UI: rendering")
	}
}

// uiFragment renders one template of a page alone, for htmx to swap in.
func (s *Server) uiFragment(name string, data func(*http.Request) (any, error)) http.HandlerFunc {
	page := "pipeline"
	if name == "eventrows" {
		page = "events"
	}
	return func(w http.ResponseWriter, r *http.Request) {
		d, err := data(r)
		if err != nil {
			s.fail(w, http.StatusInternalServerError, err)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := pages[page].ExecuteTemplate(w, name, d); err != nil {
			s.log.Warn().Err(err).Str("fragment", name).Msg("UI: rendering")
		}
	}
}

// graphNode is a dataset or a flow of the graph, placed.
type graphNode struct {
	Name, Kind, Status string
	Flow               bool
	X, Y               int
}

func (n graphNode) Left() int { return n.X - 70 }
func (n graphNode) Top() int  { return n.Y - 16 }

// graphEdge is a data edge (a dataset into a flow, a flow into its
// dataset) or a depends_on edge between flows.
type graphEdge struct {
	From, To, Kind     string
	X1, Y1, X2, Y2, CX int
}

type graph struct {
	Nodes         []graphNode
	Edges         []graphEdge
	Width, Height int
}

type pipelineData struct {
	Graph  graph
	Status *Status
}

func (s *Server) pipelineData(r *http.Request) (any, error) {
	st, err := s.readStatus(r.Context())
	if err != nil {
		return nil, err
	}
	g, err := s.graph(r, st)
	return pipelineData{Graph: g, Status: st}, err
}

// graph lays the pipeline out from its latest definitions: datasets and
// flows in columns by their depth (what a flow reads to its left, what it
// writes to its right), each flow with its state in the last update.
func (s *Server) graph(r *http.Request, st *Status) (graph, error) {
	datasets := map[string]string{} // name: kind
	flows := map[string]domain.FlowDefinition{}
	err := s.store.Scan(r.Context(), eventstore.Filter{Types: []domain.EventType{domain.EventDatasetDefinition, domain.EventFlowDefinition, domain.EventSinkDefinition}}, func(ev *domain.Event) error {
		switch d := ev.Details; {
		case d.DatasetDefinition != nil:
			datasets[ev.Origin.DatasetName] = strings.ToLower(strings.ReplaceAll(string(d.DatasetDefinition.DatasetType), "_", " "))
		case d.SinkDefinition != nil:
			datasets[ev.Origin.DatasetName] = "sink"
		case d.FlowDefinition != nil:
			flows[ev.Origin.FlowName] = *d.FlowDefinition
		}
		return nil
	})
	if err != nil {
		return graph{}, err
	}
	status := map[string]string{}
	for _, f := range st.Flows {
		status[f.Name] = f.Status
	}
	// depth: a dataset one past the flows that write it, a flow one past
	// what it reads
	depth := map[string]int{}
	key := func(flow bool, name string) string {
		if flow {
			return "f:" + name
		}
		return "d:" + name
	}
	for range len(flows) + len(datasets) + 1 {
		changed := false
		for name, f := range flows {
			d := 0
			for _, in := range f.InputDatasets {
				d = max(d, depth[key(false, in)]+1)
			}
			for _, p := range f.DependsOn {
				d = max(d, depth[key(true, p)])
			}
			if depth[key(true, name)] != d {
				depth[key(true, name)], changed = d, true
			}
			if out := key(false, f.OutputDataset); depth[out] < d+1 {
				depth[out], changed = d+1, true
			}
		}
		if !changed {
			break
		}
	}
	var g graph
	place := map[string]graphNode{}
	rows := map[int]int{}
	add := func(k, name, kind, st string, flow bool) {
		col := depth[k]
		n := graphNode{Name: name, Kind: kind, Status: st, Flow: flow, X: 90 + col*190, Y: 30 + rows[col]*56}
		rows[col]++
		place[k] = n
		g.Nodes = append(g.Nodes, n)
		g.Width, g.Height = max(g.Width, n.X+90), max(g.Height, n.Y+30)
	}
	for _, name := range slices.Sorted(maps.Keys(datasets)) {
		add(key(false, name), name, datasets[name], "", false)
	}
	for _, name := range slices.Sorted(maps.Keys(flows)) {
		add(key(true, name), name, "flow", status[name], true)
	}
	// an edge is named by its ends' keys: d:dataset, f:flow
	edge := func(from, to, kind string) {
		a, okA := place[from]
		b, okB := place[to]
		if !okA || !okB {
			return
		}
		g.Edges = append(g.Edges, graphEdge{From: from, To: to, Kind: kind, X1: a.X + 70, Y1: a.Y, X2: b.X - 70, Y2: b.Y, CX: (a.X + b.X) / 2})
	}
	for _, name := range slices.Sorted(maps.Keys(flows)) {
		f := flows[name]
		for _, in := range f.InputDatasets {
			edge(key(false, in), key(true, name), "data")
		}
		edge(key(true, name), key(false, f.OutputDataset), "data")
		for _, p := range f.DependsOn {
			edge(key(true, p), key(true, name), "depends_on")
		}
	}
	return g, nil
}

func (s *Server) uiPipeline(w http.ResponseWriter, r *http.Request) {
	d, err := s.pipelineData(r)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	s.render(w, "pipeline", "Pipeline", d)
}

func (s *Server) uiUpdates(w http.ResponseWriter, r *http.Request) {
	list, err := s.updateList(r)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	s.render(w, "updates", "Updates", list)
}

// updateFlow is a flow of one update: its figures and its rows per second
// over the update, drawn as a line.
type updateFlow struct {
	FlowState
	Spark string
	Peak  int64
}

func (s *Server) uiUpdate(w http.ResponseWriter, r *http.Request) {
	id, err := s.findUpdate(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, http.StatusNotFound, err)
		return
	}
	type batch struct {
		at   time.Time
		rows int64
	}
	flows := map[string]*updateFlow{}
	batches := map[string][]batch{}
	state := ""
	var start time.Time
	err = s.store.Scan(r.Context(), eventstore.Filter{Update: id, Types: []domain.EventType{domain.EventCreateUpdate, domain.EventUpdateProgress, domain.EventFlowProgress, domain.EventBatchCommitted}}, func(ev *domain.Event) error {
		switch d := ev.Details; {
		case d.CreateUpdate != nil:
			start = ev.Timestamp
		case d.UpdateProgress != nil:
			state = string(d.UpdateProgress.State)
		case d.FlowProgress != nil:
			f := flows[ev.Origin.FlowName]
			if f == nil {
				f = &updateFlow{FlowState: FlowState{Name: ev.Origin.FlowName}}
				flows[f.Name] = f
			}
			f.Status = string(d.FlowProgress.Status)
		case d.BatchCommitted != nil:
			if f := flows[ev.Origin.FlowName]; f != nil {
				f.Rows += d.BatchCommitted.NumRows
				f.Batches++
				batches[f.Name] = append(batches[f.Name], batch{ev.Timestamp, d.BatchCommitted.NumRows})
			}
		}
		return nil
	})
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	var list []*updateFlow
	for _, name := range slices.Sorted(maps.Keys(flows)) {
		f := flows[name]
		// rows per second, a point a second of the update
		perSecond := map[int]int64{}
		last := 0
		for _, b := range batches[name] {
			sec := int(b.at.Sub(start) / time.Second)
			perSecond[sec] += b.rows
			last = max(last, sec)
		}
		for _, n := range perSecond {
			f.Peak = max(f.Peak, n)
		}
		var pts []string
		for sec := 0; sec <= last; sec++ {
			y := 28
			if f.Peak > 0 {
				y = 28 - int(perSecond[sec]*26/f.Peak)
			}
			pts = append(pts, fmt.Sprintf("%d,%d", sec*200/max(last, 1), y))
		}
		f.Spark = strings.Join(pts, " ")
		list = append(list, f)
	}
	s.render(w, "update", "Update "+id[:min(8, len(id))], map[string]any{"ID": id, "State": state, "Flows": list})
}

// updateList is the updates, the latest first.
func (s *Server) updateList(r *http.Request) ([]*UpdateInfo, error) {
	var list []*UpdateInfo
	byID := map[string]*UpdateInfo{}
	err := s.store.Scan(r.Context(), eventstore.Filter{Types: []domain.EventType{domain.EventCreateUpdate, domain.EventUpdateProgress}}, func(ev *domain.Event) error {
		switch d := ev.Details; {
		case d.CreateUpdate != nil:
			u := &UpdateInfo{ID: ev.Origin.UpdateID, Cause: d.CreateUpdate.Cause, Started: ev.Timestamp.UTC()}
			byID[u.ID] = u
			list = append(list, u)
		case d.UpdateProgress != nil:
			if u := byID[ev.Origin.UpdateID]; u != nil {
				u.State = string(d.UpdateProgress.State)
				if st := d.UpdateProgress.State; st == domain.UpdateCompleted || st == domain.UpdateFailed || st == domain.UpdateCanceled {
					u.Ended = ev.Timestamp.UTC()
				}
			}
		}
		return nil
	})
	slices.Reverse(list)
	return list, err
}

type eventsData struct {
	Types               []domain.EventType
	Type, Flow, Dataset string
	Events              []*domain.Event
	Last                uint64
}

// eventsData is the last 200 events the filters match, the latest first,
// or, with since, those after it (for the live tail).
func (s *Server) eventsData(r *http.Request) (any, error) {
	q := r.URL.Query()
	d := eventsData{Types: domain.EventTypes, Type: q.Get("type"), Flow: q.Get("flow"), Dataset: q.Get("dataset")}
	f := eventstore.Filter{Flow: d.Flow, Dataset: d.Dataset}
	if d.Type != "" {
		f.Types = []domain.EventType{domain.EventType(d.Type)}
	}
	last := s.store.LastSeq()
	d.Last = last
	since, _ := strconv.ParseUint(q.Get("since"), 10, 64)
	if since > 0 {
		f.From = since + 1
	} else if last > 5000 {
		f.From = last - 5000 // the page shows the recent ones
	}
	f.To = last
	if f.From > f.To {
		return d, nil
	}
	err := s.store.Scan(r.Context(), f, func(ev *domain.Event) error {
		ev.Data = nil
		d.Events = append(d.Events, ev)
		if len(d.Events) > 200 {
			d.Events = d.Events[1:]
		}
		return nil
	})
	slices.Reverse(d.Events)
	return d, err
}

func (s *Server) uiEvents(w http.ResponseWriter, r *http.Request) {
	d, err := s.eventsData(r)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	s.render(w, "events", "Event log", d)
}

type qualityRow struct {
	Dataset, Expectation string
	Passed, Failed       int64
	Rate                 float64
	Trend                []float64 // a failure rate an update, -1 where it was not checked
}

func (s *Server) uiQuality(w http.ResponseWriter, r *http.Request) {
	ids, err := UpdateIDs(r.Context(), s.store)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	ids = ids[max(0, len(ids)-10):]
	history := make([]map[QualityKey]*QualityFigures, len(ids))
	for i, id := range ids {
		if history[i], err = UpdateQuality(r.Context(), s.store, id, ""); err != nil {
			s.fail(w, http.StatusInternalServerError, err)
			return
		}
	}
	data := map[string]any{"Updates": len(ids)}
	var rows []qualityRow
	if len(ids) > 0 {
		data["Update"] = ids[len(ids)-1]
		now := history[len(history)-1]
		for _, k := range SortedKeys(now) {
			f := now[k]
			row := qualityRow{Dataset: k.Dataset, Expectation: k.Expectation, Passed: f.Passed, Failed: f.Failed, Rate: f.Rate()}
			for _, h := range history {
				if hf := h[k]; hf != nil {
					row.Trend = append(row.Trend, hf.Rate())
				} else {
					row.Trend = append(row.Trend, -1)
				}
			}
			rows = append(rows, row)
		}
	} else {
		data["Update"] = ""
	}
	data["Rows"] = rows
	s.render(w, "quality", "Data quality", data)
}

// uiTables lists the tables, or shows 100 rows of one as of a point of the
// log, from a cursor.
func (s *Server) uiTables(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "" {
		names, err := StoredTables(r.Context(), s.store)
		if err != nil {
			s.fail(w, http.StatusInternalServerError, err)
			return
		}
		s.render(w, "tables", "Tables", map[string]any{"Tables": names})
		return
	}
	name, seq, schema, ok := s.tableAt(w, r)
	if !ok {
		return
	}
	skip, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	const pageRows = 100
	var rows [][]string
	more, err := s.page(r, name, seq, schema, skip, pageRows, func(b *domain.Batch, i int) error {
		row := make([]string, len(b.Columns))
		for j, c := range b.Columns {
			row[j] = c.Value(i).String()
		}
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	next := 0
	if more {
		next = skip + pageRows
	}
	s.render(w, "tables", name, map[string]any{"Name": name, "AsOf": seq, "AsOfParam": r.URL.Query().Get("as_of"), "Columns": schema.Names(), "Rows": rows, "Next": next})
}
