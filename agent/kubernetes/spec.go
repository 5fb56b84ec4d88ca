package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// Labels on every Job, Secret and pod of the runtime.
const (
	LabelManagedBy  = "app.kubernetes.io/managed-by"
	LabelOrg        = "helix-org.io/org"
	LabelWorker     = "helix-org.io/worker"
	LabelActivation = "helix-org.io/activation"
	ManagedBy       = "helix-org"
	// PromptFile is the Secret's key holding the prompt.
	PromptFile = "prompt"
)

// envFiles are the files of a worker's environment directory the agent
// reads; they travel in the Secret, as the pod shares no disk with the server.
var envFiles = []string{"role.md", "identity.md", "agent.md", "mcp.json"}

// JobName is the name of an activation's Job and Secret: derived from the
// activation id alone, so that whoever creates it a second time adopts it.
func JobName(activation string) string {
	return "helix-org-" + labelValue(activation)
}

// labelValue fits an id into a label value (63 characters): ids are
// lowercase letters, digits and hyphens already, but may be longer.
func labelValue(id string) string {
	if len(id) <= 63 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return id[:50] + "-" + hex.EncodeToString(sum[:6])
}

// Labels are an activation's labels, on its Job, Secret and pod.
func Labels(org, worker, activation string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelOrg: labelValue(org), LabelWorker: labelValue(worker), LabelActivation: labelValue(activation)}
}

// envName matches the Secret keys that are environment variables; the
// others are files (the prompt, role.md, …).
var envName = domain.LazyRegexp(`^[A-Z_][A-Z0-9_]*$`)

// IsEnvKey reports whether a Secret key is an environment variable.
func IsEnvKey(k string) bool { return envName().MatchString(k) }

// splitEnv separates the variables that carry the run's token or the
// server's address — into the Secret — from the rest, which the Job's
// spec may show: what reaches the org is never a literal in the spec.
func splitEnv(env []string, token, serverURL string) (secret map[string][]byte, plain []envVar) {
	secret = map[string][]byte{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if token != "" && strings.Contains(v, token) || serverURL != "" && strings.Contains(v, serverURL) {
			secret[k] = []byte(v)
			continue
		}
		plain = append(plain, envVar{Name: k, Value: v})
	}
	slices.SortFunc(plain, func(a, b envVar) int { return strings.Compare(a.Name, b.Name) })
	return secret, plain
}

// runSpec is everything one run's Job and Secret are made from.
type runSpec struct {
	Namespace, Org string
	Pod            Pod
	Command        []string
	Run            domain.Run // as seen from the pod: the server at its in-cluster URL
	LLM            *agent.LLMConfig
	// EnvDir is the worker's environment directory on the server.
	EnvDir string
}

// build makes the Secret and the Job of one run.
func (s runSpec) build() (*secret, *job, error) {
	run := s.Run
	env := agent.RunEnv(run)
	if s.LLM != nil {
		env = append(env, s.LLM.ForRun(run).Environ()...)
	}
	env = append(env, "HOME=/tmp", "TMPDIR=/tmp")
	data, plain := splitEnv(env, run.Token, run.BaseURL)
	data[PromptFile] = []byte(run.Prompt)
	for _, f := range envFiles {
		b, err := os.ReadFile(filepath.Join(s.EnvDir, f))
		if err != nil && !os.IsNotExist(err) {
			return nil, nil, fmt.Errorf("read %s of %s: %w", f, run.WorkerID, err)
		}
		if err == nil {
			data[f] = b
		}
	}
	name := JobName(run.ActivationID)
	labels := Labels(s.Org, run.WorkerID, run.ActivationID)
	meta := objectMeta{Name: name, Namespace: s.Namespace, Labels: labels}
	sec := &secret{Metadata: meta, Type: "Opaque", Data: data}
	res, err := s.Pod.resources()
	if err != nil {
		return nil, nil, err
	}
	deadline := int64(math.Ceil(run.Timeout.Seconds()))
	j := &job{Metadata: meta, Spec: jobSpec{
		// Retries are the dispatcher's, with the triggers' backoff: a
		// failed pod fails the run.
		BackoffLimit:          ptr(int32(0)),
		ActiveDeadlineSeconds: &deadline,
		Template: podTemplate{
			Metadata: objectMeta{Labels: labels},
			Spec: podSpec{
				RestartPolicy:                "Never",
				AutomountServiceAccountToken: ptr(false), // agents hold no credentials of the cluster
				EnableServiceLinks:           ptr(false),
				SecurityContext:              &podSecurityContext{FSGroup: ptr(int64(65534))},
				Containers: []container{{
					Name: "agent", Image: s.Pod.Image, Command: s.Command, Env: plain, WorkingDir: "/tmp",
					// /tmp is the agent's only writable place.
					VolumeMounts: []volumeMount{{Name: "run", MountPath: MountPath, ReadOnly: true}, {Name: "tmp", MountPath: "/tmp"}},
					Resources:    res,
					SecurityContext: &securityContext{
						RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65534)), RunAsGroup: ptr(int64(65534)),
						AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
						Capabilities: &capabilities{Drop: []string{"ALL"}},
					},
				}},
				Volumes: []volume{
					{Name: "run", Secret: &secretVolume{SecretName: name, DefaultMode: ptr(int32(0o440))}},
					{Name: "tmp", EmptyDir: &struct{}{}},
				},
			},
		},
	}}
	return sec, j, nil
}

// resources are the pod's requests and limits: the same, so a run gets
// what it asked for and no more.
func (p Pod) resources() (resources, error) {
	list := map[string]string{}
	for name, q := range map[string]string{"cpu": p.CPU, "memory": p.Memory} {
		if q == "" {
			continue
		}
		if err := checkQuantity(q); err != nil {
			return resources{}, fmt.Errorf("kubernetes %s %q: %w", name, q, err)
		}
		list[name] = q
	}
	if len(list) == 0 {
		return resources{}, nil
	}
	return resources{Requests: list, Limits: maps.Clone(list)}, nil
}

func ptr[T any](v T) *T { return &v }
