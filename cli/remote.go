package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/server"
	"github.com/sluicehq/sluice/sources"
)

// remote is the API of the process that holds the store, over the socket
// in the storage directory: the read commands go through it when the store
// is held.
type remote struct {
	socket string
	client *http.Client
}

// remoteFor is the API of the process holding proj's store, when the
// error of opening it says another process holds it and that process
// serves it.
func remoteFor(proj *pipeline.Project, openErr error) (*remote, bool) {
	if domain.CodeOf(openErr) != domain.CodeStoreLocked {
		return nil, false
	}
	path := server.SocketPath(proj.Storage)
	if _, err := os.Stat(path); err != nil {
		return nil, false
	}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
	return &remote{socket: path, client: &http.Client{Transport: &http.Transport{DialContext: dial}}}, true
}

// get asks the API; an answer that is not 200 is its error.
func (r *remote) get(ctx context.Context, path string, q url.Values, header http.Header) (*http.Response, error) {
	u := "http://sluice" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fail(ExitFailed, domain.Wrap(domain.CodeStoreLocked, err, "the process holding the storage did not answer on "+r.socket).
			WithHint("it may be ending; try again, or wait for it to end"))
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var body struct {
			Error *domain.ErrorInfo `json:"error"`
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil || body.Error == nil {
			return nil, fail(ExitFailed, fmt.Errorf("the process holding the storage answered %s", resp.Status))
		}
		e := domain.Errorf(body.Error.Code, "%s", body.Error.Message).WithHint(body.Error.Hint)
		code := ExitFailed
		if resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound {
			code = ExitInvalid
		}
		return nil, fail(code, e)
	}
	return resp, nil
}

// remoteEvent is what the table format shows of an event the API sent.
type remoteEvent struct {
	Seq       uint64        `json:"seq"`
	Timestamp time.Time     `json:"timestamp"`
	Type      string        `json:"event_type"`
	Level     string        `json:"level"`
	Message   string        `json:"message"`
	Origin    domain.Origin `json:"origin"`
}

// writeRemote writes an event line of the API in the writer's format: a
// jsonl line as it came (it is that format), else through the writer.
func writeRemote(w eventWriter, line []byte) error {
	if j, ok := w.(*jsonlEvents); ok {
		_, err := j.w.Write(append(bytes.TrimRight(line, "\n"), '\n'))
		return err
	}
	var e remoteEvent
	if err := json.Unmarshal(line, &e); err != nil {
		return err
	}
	return w.write(&domain.Event{Seq: e.Seq, Timestamp: e.Timestamp, Type: domain.EventType(e.Type), Level: domain.Level(e.Level), Message: e.Message, Origin: e.Origin})
}

// events prints the events the API gives for q, then, with follow, the
// stream of those after them until ctx ends. A dropped stream is taken up
// again after the last event seen, so none is missed or repeated.
func (r *remote) events(ctx context.Context, q url.Values, follow bool, w eventWriter, flush func() error) error {
	resp, err := r.get(ctx, "/api/events", q, nil)
	if err != nil {
		return err
	}
	last := uint64(0)
	if s := q.Get("since"); s != "" {
		fmt.Sscan(s, &last)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var seq struct {
			Seq uint64 `json:"seq"`
		}
		_ = json.Unmarshal(sc.Bytes(), &seq)
		last = max(last, seq.Seq)
		if err := writeRemote(w, sc.Bytes()); err != nil {
			resp.Body.Close()
			return err
		}
	}
	resp.Body.Close()
	if err := sc.Err(); err != nil {
		return fail(ExitFailed, err)
	}
	if err := w.flush(); err != nil {
		return err
	}
	if err := flush(); err != nil || !follow {
		return err
	}
	if last == 0 {
		// nothing matched: follow from the log's end as it was asked
		var h struct {
			LastSeq uint64 `json:"last_seq"`
		}
		resp, err := r.get(ctx, "/api/health", nil, nil)
		if err != nil {
			return err
		}
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if err != nil {
			return fail(ExitFailed, err)
		}
		last = h.LastSeq
	}
	for ctx.Err() == nil {
		err := r.follow(ctx, q, &last, w, flush)
		if ctx.Err() != nil {
			return nil // Ctrl-C ends a follow
		}
		var ee *exitError
		if errors.As(err, &ee) {
			return err // an answer, not a dropped connection
		}
		time.Sleep(200 * time.Millisecond) // the stream dropped: take it up again
	}
	return nil
}

// follow reads the event stream after *last, moving *last on.
func (r *remote) follow(ctx context.Context, q url.Values, last *uint64, w eventWriter, flush func() error) error {
	qs := url.Values{}
	for k, v := range q {
		if k != "since" {
			qs[k] = v
		}
	}
	resp, err := r.get(ctx, "/api/events/stream", qs, http.Header{"Last-Event-Id": {fmt.Sprint(*last)}})
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) && domain.CodeOf(ee.err) == domain.CodeStoreLocked {
			return nil // not answering: tried again
		}
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var id uint64
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			fmt.Sscan(line[4:], &id)
		case strings.HasPrefix(line, "data: "):
			if err := writeRemote(w, []byte(line[6:])); err != nil {
				return err
			}
			*last = id
			if err := w.flush(); err != nil {
				return err
			}
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// table is a table as of asOf (an event seq; "" now) through the API: its
// schema, and a scan of its rows, read as they stream in, a batch of 8,192
// at a time.
func (r *remote) table(ctx context.Context, name, asOf string) (domain.Schema, func(func(*domain.Batch) error) error, error) {
	q := url.Values{}
	if asOf != "" {
		if _, err := strconv.ParseUint(asOf, 10, 64); err != nil {
			return domain.Schema{}, nil, usageError("--as-of %q: while another process holds the storage, give an event seq (sluice events shows them)", asOf)
		}
		q.Set("as_of", asOf)
	}
	resp, err := r.get(ctx, "/api/tables/"+url.PathEscape(name), q, nil)
	if err != nil {
		return domain.Schema{}, nil, err
	}
	var info server.TableInfo
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if err != nil {
		return domain.Schema{}, nil, fail(ExitFailed, err)
	}
	q.Set("as_of", strconv.FormatUint(info.AsOf, 10)) // the rows of that very point
	scan := func(fn func(*domain.Batch) error) error {
		resp, err := r.get(ctx, "/api/tables/"+url.PathEscape(name)+"/rows", q, nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		var chunk strings.Builder
		lines := 0
		emit := func() error {
			if lines == 0 {
				return nil
			}
			b, err := sources.DecodeJSONLines(chunk.String(), info.Schema)
			chunk.Reset()
			lines = 0
			if err != nil {
				return err
			}
			return fn(b)
		}
		for sc.Scan() {
			chunk.Write(sc.Bytes())
			chunk.WriteByte('\n')
			if lines++; lines == 8192 {
				if err := emit(); err != nil {
					return err
				}
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
		return emit()
	}
	return info.Schema, scan, nil
}
