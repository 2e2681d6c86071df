package eventstore

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"

	"github.com/sluicehq/sluice/domain"
)

// TestBusDeliversInOrder: a subscriber that Acks gets every committed event,
// in seq order, as JSON without Data, with the metadata set.
func TestBusDeliversInOrder(t *testing.T) {
	s := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	msgs, err := s.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const writers, perWriter = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				e := ev(domain.EventFlowProgress, "f"+strconv.Itoa(w), "d", "u", "m")
				e.Details.FlowProgress = &domain.FlowProgress{Status: domain.FlowRunning}
				e.Data = []byte("bulk")
				if i%2 == 0 {
					e.Origin.DatasetName = ""
				}
				if _, err := s.Append(context.Background(), e); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	total := writers * perWriter
	for want := uint64(1); want <= uint64(total); want++ {
		var m *message.Message
		select {
		case m = <-msgs:
		case <-time.After(10 * time.Second):
			t.Fatalf("no message for seq %d within 10s", want)
		}
		m.Ack()
		if got := m.Metadata.Get("seq"); got != strconv.FormatUint(want, 10) {
			t.Fatalf("message %d has seq %q: out of order", want, got)
		}
		stored, err := s.Get(want)
		if err != nil {
			t.Fatal(err)
		}
		var payload map[string]any
		if err := json.Unmarshal(m.Payload, &payload); err != nil {
			t.Fatalf("payload is not JSON: %v", err)
		}
		if _, has := payload["Data"]; has {
			t.Fatalf("payload carries Data: %s", m.Payload)
		}
		var got domain.Event
		if err := json.Unmarshal(m.Payload, &got); err != nil {
			t.Fatal(err)
		}
		stored.Data = nil
		if got.Seq != want || got.ID != stored.ID || got.ID != m.UUID || !got.Timestamp.Equal(stored.Timestamp) ||
			got.Type != stored.Type || got.Origin.FlowName != stored.Origin.FlowName || got.Details.FlowProgress == nil {
			t.Fatalf("message %d = %+v, stored event %+v", want, got, stored)
		}
		for k, v := range map[string]string{
			"event_type": string(stored.Type), "flow": stored.Origin.FlowName,
			"dataset": stored.Origin.DatasetName, "update": stored.Origin.UpdateID,
		} {
			if m.Metadata.Get(k) != v {
				t.Fatalf("message %d: metadata %s = %q, want %q", want, k, m.Metadata.Get(k), v)
			}
		}
	}
	wg.Wait()
	select {
	case m := <-msgs:
		t.Fatalf("unexpected extra message, seq %s", m.Metadata.Get("seq"))
	case <-time.After(20 * time.Millisecond):
	}
}

// TestBusStuckSubscriber: a subscriber that never reads does not hold up
// Append, and Close still returns.
func TestBusStuckSubscriber(t *testing.T) {
	s, err := Open(t.TempDir(), WithSyncWrites(false), smallBadger())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscribe(context.Background()); err != nil {
		t.Fatal(err)
	}
	const appends, per = 500, 10 // 5000 events, far past the subscriber's buffer
	done := make(chan error, 1)
	go func() {
		for range appends {
			events := make([]*domain.Event, per)
			for j := range events {
				events[j] = ev(domain.EventFlowProgress, "f", "", "", "")
			}
			if _, err := s.Append(context.Background(), events...); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("Appends blocked behind a stuck subscriber (LastSeq %d)", s.LastSeq())
	}
	if s.LastSeq() != appends*per {
		t.Fatalf("LastSeq = %d", s.LastSeq())
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Close blocked behind a stuck subscriber")
	}
}

// TestBusCustom publishes on a bus given with WithBus, which Close leaves
// open.
func TestBusCustom(t *testing.T) {
	bus := gochannel.NewGoChannel(gochannel.Config{OutputChannelBuffer: 16, BlockPublishUntilSubscriberAck: true}, nil)
	defer bus.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	direct, err := bus.Subscribe(ctx, Topic)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.TempDir(), WithSyncWrites(false), smallBadger(), WithBus(bus, bus))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", ""))
	select {
	case m := <-direct:
		m.Ack()
		if m.Metadata.Get("seq") != "1" {
			t.Fatalf("seq %q", m.Metadata.Get("seq"))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing published on the given bus")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cancel() // the direct subscriber goes; Publish then waits for nobody
	if err := bus.Publish(Topic, message.NewMessage("x", nil)); err != nil {
		t.Fatalf("Close closed the caller's bus: %v", err)
	}

	_, err = Open(t.TempDir(), WithBus(bus, nil))
	wantCode(t, err, domain.CodeInvalidDefinition)
}
