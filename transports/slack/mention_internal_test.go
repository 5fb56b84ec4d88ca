package slack

import "testing"

// TestAtName: what counts as naming a worker in a message's text.
func TestAtName(t *testing.T) {
	for _, tt := range []struct {
		text, name string
		want       bool
	}{
		{"@Alice can you look?", "Alice", true},
		{"hey @alice, look", "Alice", true},
		{"thanks @ALICE.", "Alice", true},
		{"(@alice)", "alice", true},
		{"@Alice Bot: status", "Alice Bot", true},
		{"@Alicebot", "Alice", false},
		{"@alice.smith", "alice", false},
		{"@alice-bot", "alice", false},
		{"@alice_x", "alice", false},
		{"bob@alice", "alice", false},
		{"Alice, look", "Alice", false},
		{"@Zoë!", "zoë", true},
		{"@", "alice", false},
		{"@ali", "alice", false},
	} {
		if got := atName(tt.text, tt.name); got != tt.want {
			t.Errorf("atName(%q, %q) = %v, want %v", tt.text, tt.name, got, tt.want)
		}
	}
}
