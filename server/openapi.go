package server

import (
	_ "embed"
	"net/http"
)

// openapiDoc describes the API (OpenAPI 3.1).
//
//go:embed openapi.json
var openapiDoc []byte

func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openapiDoc)
}
