package options

import "testing"

func TestList(t *testing.T) {
	got := List(map[string]string{"topic": "the topic", "mode": "a or b"})
	if want := "mode (a or b), topic (the topic)"; got != want {
		t.Errorf("List = %q, want %q", got, want)
	}
}
