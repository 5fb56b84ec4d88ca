package kubernetes_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/kubernetes"
	"github.com/helixml/helix-org/domain"
)

// TestParseOverrides: kubernetes.overrides is refused with the key, the
// entry and what is wrong, and merged worker over role over defaults.
func TestParseOverrides(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "empty", in: "", want: "{Image:base CPU:1 Memory:1Gi}"},
		{name: "role then worker", in: `{"roles":{"r-a":{"memory":"4Gi","image":"r:1"}},"workers":{"w-a":{"cpu":"500m"}}}`, want: "{Image:r:1 CPU:500m Memory:4Gi}"},
		{name: "worker beats role", in: `{"roles":{"r-a":{"cpu":"2"}},"workers":{"w-a":{"cpu":"3"}}}`, want: "{Image:base CPU:3 Memory:1Gi}"},
		{name: "unknown key", in: `{"roles":{"r-a":{"gpu":"1"}}}`, want: `kubernetes.overrides: json: unknown field "gpu"`},
		{name: "bad quantity", in: `{"workers":{"w-a":{"memory":"lots"}}}`, want: `kubernetes.overrides: w-a: memory "lots" is not a Kubernetes quantity`},
		{name: "not JSON", in: `[`, want: "kubernetes.overrides: unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ov, err := kubernetes.ParseOverrides(tt.in)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = fmt.Sprintf("%+v", ov.For(kubernetes.Pod{Image: "base", CPU: "1", Memory: "1Gi"}, "w-a", "r-a"))
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestJobName: a Job's name and labels follow from the ids alone and
// stay within Kubernetes' 63 characters.
func TestJobName(t *testing.T) {
	long := "w-" + strings.Repeat("a", 62)
	if got := kubernetes.JobName("a-abc"); got != "helix-org-a-abc" {
		t.Errorf("JobName(a-abc) = %q", got)
	}
	l := kubernetes.Labels("org-x", long, "a-abc")
	if v := l[kubernetes.LabelWorker]; len(v) > 63 || !strings.HasPrefix(v, long[:50]) {
		t.Errorf("a 64-character worker id labels as %q (%d characters)", v, len(v))
	}
	if l2 := kubernetes.Labels("org-x", long, "a-abc"); l2[kubernetes.LabelWorker] != l[kubernetes.LabelWorker] {
		t.Error("the same worker labels differently")
	}
}

// TestSettingsRefuseBadValues: `config set` refuses a quantity or an
// override Kubernetes would refuse, naming the key.
func TestSettingsRefuseBadValues(t *testing.T) {
	tests := []struct {
		spec      domain.SettingSpec
		bad, good string
		want      string
	}{
		{kubernetes.CPUSetting, "fast", "500m", `kubernetes.cpu: cpu "fast" is not a Kubernetes quantity`},
		{kubernetes.MemorySetting, "1 GB", "512Mi", `kubernetes.memory: memory "1 GB" is not a Kubernetes quantity`},
		{kubernetes.OverridesSetting, `{"roles":{"r-a":{"cpu":"x"}}}`, `{"roles":{"r-a":{"cpu":"2"}}}`, `kubernetes.overrides: r-a: cpu "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.spec.Key, func(t *testing.T) {
			if err := tt.spec.Validate(tt.bad); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Validate(%q) = %v, want %q", tt.bad, err, tt.want)
			}
			if err := tt.spec.Validate(tt.good); err != nil {
				t.Errorf("Validate(%q) = %v", tt.good, err)
			}
		})
	}
}

// TestQuantities: kubernetes.cpu and kubernetes.memory take what the
// apiserver takes as a quantity, and nothing negative.
func TestQuantities(t *testing.T) {
	for q, ok := range map[string]bool{
		"500m": true, "2": true, "0.5": true, ".5": true, "1.": true, "512Mi": true, "1.5Gi": true, "4G": true, "1e3": true, "1E-3": true, "+1": true, "100n": true,
		"-1": false, "1 GB": false, "1gi": false, "Mi": false, "1.2.3": false, "1e": false, "0x10": false, "fast": false,
	} {
		if err := kubernetes.CPUSetting.Validate(q); (err == nil) != ok {
			t.Errorf("Validate(%q) = %v, want ok=%v", q, err, ok)
		}
	}
}
