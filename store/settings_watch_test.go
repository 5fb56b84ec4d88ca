package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
)

// TestSettingsChangedWakes: a loop waiting for a token wakes when the
// server's own handle sets it, and when another process sets or deletes
// it, at the server's next commit of anything; woken, it reads the new
// value.
func TestSettingsChangedWakes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	server, cli := twoHandles(t, nil)
	commit := func() error {
		// Any write of the server's: an audit record, flushed.
		server.RecordCall(domain.ToolCall{Worker: "w-test", Tool: "get_worker", Arguments: json.RawMessage(`{}`), Status: domain.CallOK})
		return server.FlushCalls(ctx)
	}
	for _, tc := range []struct {
		name   string
		change func() error
		want   int64
	}{
		{"the server sets it", func() error { return server.SetSetting(ctx, limitSetting, "20") }, 20},
		{"another process sets it", func() error {
			if err := cli.SetSetting(ctx, limitSetting, "30"); err != nil {
				return err
			}
			return commit()
		}, 30},
		{"another process deletes it", func() error {
			if err := cli.DeleteSetting(ctx, limitSetting.Key); err != nil {
				return err
			}
			return commit()
		}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := server.SettingsChanged()
			if err := tc.change(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("SettingsChanged was not closed after the change committed")
			}
			if got := server.IntSetting(ctx, limitSetting); got != tc.want {
				t.Errorf("woken, the server reads %d, want %d", got, tc.want)
			}
		})
	}
}
