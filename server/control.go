package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/domain"
)

// UpdateRequest is the body of POST /api/updates: the refresh options of
// sluice run.
type UpdateRequest struct {
	FullRefreshAll  bool     `json:"full_refresh_all,omitempty"`
	FullRefresh     []string `json:"full_refresh,omitempty"`
	Refresh         []string `json:"refresh,omitempty"`
	RefreshFailed   bool     `json:"refresh_failed,omitempty"`
	ResetCheckpoint []string `json:"reset_checkpoint,omitempty"`
}

// Updater starts and cancels the updates of the process that serves.
type Updater interface {
	// Start starts an update; ErrUpdateRunning when one runs.
	Start(req UpdateRequest) error
	// Cancel cancels the running update; false when none runs.
	Cancel() bool
}

// ErrUpdateRunning is Start's refusal while an update runs.
var ErrUpdateRunning = domain.Errorf(domain.CodeUpdateRunning, "an update is running").
	WithHint("wait for it to end, or cancel it (POST /api/updates/cancel)")

// WithUpdater lets the API start and cancel updates.
func (s *Server) WithUpdater(u Updater) *Server {
	s.updater = u
	return s
}

func (s *Server) startUpdate(w http.ResponseWriter, r *http.Request) {
	if s.updater == nil {
		s.fail(w, http.StatusConflict, domain.Errorf(domain.CodeUpdateRunning, "this process runs one update, and starts no other").
			WithHint("sluice serve holds the storage and starts updates on request"))
		return
	}
	var req UpdateRequest
	if r.ContentLength != 0 {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
			s.fail(w, http.StatusBadRequest, domain.Errorf(domain.CodeInvalidParameterValue, "the body is not an update request: %v", err).
				WithHint(`send {"full_refresh": ["t"]}, {"refresh": ["t"]}, {"full_refresh_all": true}, {"refresh_failed": true}, {"reset_checkpoint": ["f"]} or nothing`))
			return
		}
	}
	switch err := s.updater.Start(req); {
	case errors.Is(err, ErrUpdateRunning):
		s.fail(w, http.StatusConflict, err)
	case err != nil:
		s.fail(w, http.StatusBadRequest, err)
	default:
		w.WriteHeader(http.StatusAccepted)
		s.json(w, map[string]any{"started": true})
	}
}

func (s *Server) cancelUpdate(w http.ResponseWriter, r *http.Request) {
	if s.updater == nil || !s.updater.Cancel() {
		s.fail(w, http.StatusConflict, domain.Errorf(domain.CodeEventNotFound, "no update is running").WithHint("GET /api/status shows the last update"))
		return
	}
	w.WriteHeader(http.StatusAccepted)
	s.json(w, map[string]any{"canceling": true})
}

// NewToken makes a bearer token for an HTTP listener.
func NewToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Loopback reports whether addr (host:port) only takes connections from
// this machine.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Guard wraps the handler of an HTTP listener: a request that changes
// something needs the bearer token, and, when the listener takes
// connections from other machines, every request does. The Unix socket
// needs none: its mode lets this user only in.
func Guard(h http.Handler, token string, loopback bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead || !loopback {
			given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(given), []byte(token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="sluice"`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_ = json.NewEncoder(w).Encode(apiError{Error: domain.ErrorInfoOf(domain.Errorf(domain.CodeInvalidParameterValue, "this request needs the bearer token").
					WithHint("send Authorization: Bearer TOKEN, with the token sluice printed when it started (or gave with --token)"))})
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
