package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
func splitEnv(env []string, token, serverURL string) (secret map[string][]byte, plain []corev1.EnvVar) {
	secret = map[string][]byte{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if token != "" && strings.Contains(v, token) || serverURL != "" && strings.Contains(v, serverURL) {
			secret[k] = []byte(v)
			continue
		}
		plain = append(plain, corev1.EnvVar{Name: k, Value: v})
	}
	slices.SortFunc(plain, func(a, b corev1.EnvVar) int { return strings.Compare(a.Name, b.Name) })
	return secret, plain
}

// jobSpec is everything one run's Job and Secret are made from.
type jobSpec struct {
	Namespace, Org string
	Pod            Pod
	Command        []string
	Run            domain.Run // as seen from the pod: the server at its in-cluster URL
	LLM            *agent.LLMConfig
	// EnvDir is the worker's environment directory on the server.
	EnvDir string
}

// build makes the Secret and the Job of one run.
func (s jobSpec) build() (*corev1.Secret, *batchv1.Job, error) {
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
	meta := metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: labels}
	secret := &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: data}
	res, err := s.Pod.resources()
	if err != nil {
		return nil, nil, err
	}
	deadline := int64(math.Ceil(run.Timeout.Seconds()))
	job := &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{
		// Retries are the dispatcher's, with the triggers' backoff: a
		// failed pod fails the run.
		BackoffLimit:          ptr(int32(0)),
		ActiveDeadlineSeconds: &deadline,
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{
				RestartPolicy:                corev1.RestartPolicyNever,
				AutomountServiceAccountToken: ptr(false), // agents hold no credentials of the cluster
				EnableServiceLinks:           ptr(false),
				Containers: []corev1.Container{{
					Name: "agent", Image: s.Pod.Image, Command: s.Command, Env: plain, WorkingDir: "/tmp",
					VolumeMounts: []corev1.VolumeMount{{Name: "run", MountPath: MountPath, ReadOnly: true}},
					Resources:    res,
					SecurityContext: &corev1.SecurityContext{
						RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65534)), RunAsGroup: ptr(int64(65534)),
						AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
						Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
				}},
				Volumes: []corev1.Volume{
					{Name: "run", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name, DefaultMode: ptr(int32(0o440))}}},
				},
			},
		},
	}}
	// /tmp is the agent's only writable place.
	job.Spec.Template.Spec.Volumes = append(job.Spec.Template.Spec.Volumes, corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	c := &job.Spec.Template.Spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"})
	job.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr(int64(65534))}
	return secret, job, nil
}

// resources are the pod's requests and limits: the same, so a run gets
// what it asked for and no more.
func (p Pod) resources() (corev1.ResourceRequirements, error) {
	list := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: p.CPU, corev1.ResourceMemory: p.Memory} {
		if q == "" {
			continue
		}
		v, err := resource.ParseQuantity(q)
		if err != nil {
			return corev1.ResourceRequirements{}, fmt.Errorf("kubernetes %s %q: %w", name, q, err)
		}
		list[name] = v
	}
	return corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()}, nil
}

func ptr[T any](v T) *T { return &v }
