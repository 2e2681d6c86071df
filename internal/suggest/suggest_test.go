package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"backfill_2024", "backfill_2025", "events_live", "export"}
	tests := []struct{ in, want string }{
		{"backfil_2024", "backfill_2024"},
		{"EVENTS_LIVE", "events_live"},
		{"exprt", "export"},
		{"completely_different", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Closest(tt.in, names); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Closest("x", nil); got != "" {
		t.Errorf("Closest with no candidates = %q", got)
	}
}
