// Package webhook tells an HTTP endpoint of pipeline events: a POST of
// JSON per event, with an Idempotency-Key header that is the same for
// every try of the same event, so that the receiver can keep the first.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// Webhook posts events to URL with Headers.
type Webhook struct {
	URL     string
	Headers map[string]string
	Client  *http.Client
}

// New makes a webhook; the url and header values may name secrets as
// ${env:NAME}.
func New(target string, headers map[string]string) (*Webhook, error) {
	target, err := domain.ResolveSecrets(target)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, domain.Errorf(domain.CodeInvalidOptions, "a webhook needs an http:// or https:// url")
	}
	resolved := make(map[string]string, len(headers))
	for k, v := range headers {
		r, err := domain.ResolveSecrets(v)
		if err != nil {
			return nil, err
		}
		resolved[k] = r
	}
	return &Webhook{URL: target, Headers: resolved, Client: &http.Client{Timeout: 10 * time.Second}}, nil
}

// body is what a delivery posts: the hook, why, the try, and the event in
// the form of sluice events --format jsonl.
type body struct {
	Hook    string          `json:"hook"`
	Trigger string          `json:"trigger"`
	Attempt int             `json:"attempt"`
	Event   json.RawMessage `json:"event"`
}

// Deliver posts one event; any answer but 2xx is an error, retried.
func (w *Webhook) Deliver(ctx context.Context, d domain.HookDelivery) error {
	raw, err := domain.EventJSON(d.Event)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(body{Hook: d.Hook, Trigger: d.Trigger, Attempt: d.Attempt, Event: raw})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", d.IdempotencyKey)
	req.Header.Set("User-Agent", "sluice")
	for k, v := range w.Headers {
		req.Header.Set(k, v)
	}
	resp, err := w.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the url may hold a secret: it stays out of messages
		}
		return fmt.Errorf("the webhook's endpoint did not answer: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the webhook's endpoint answered %s", resp.Status)
	}
	return nil
}
