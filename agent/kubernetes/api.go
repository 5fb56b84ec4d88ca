package kubernetes

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// The little of the Kubernetes API the runtime writes and reads, as its
// JSON: Jobs (batch/v1), Secrets and Pods (v1). Fields the runtime never
// sets or reads are left out; the apiserver fills their defaults on
// create, and decoding ignores them.

type objectMeta struct {
	Name            string            `json:"name,omitempty"`
	Namespace       string            `json:"namespace,omitempty"`
	UID             string            `json:"uid,omitempty"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
}

type listMeta struct {
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

type secret struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   objectMeta        `json:"metadata"`
	Type       string            `json:"type,omitempty"`
	Data       map[string][]byte `json:"data,omitempty"` // base64 on the wire, as []byte encodes
}

type job struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       jobSpec    `json:"spec"`
	Status     jobStatus  `json:"status,omitzero"`
}

type jobSpec struct {
	BackoffLimit          *int32      `json:"backoffLimit,omitempty"`
	ActiveDeadlineSeconds *int64      `json:"activeDeadlineSeconds,omitempty"`
	Template              podTemplate `json:"template"`
}

type podTemplate struct {
	Metadata objectMeta `json:"metadata"`
	Spec     podSpec    `json:"spec"`
}

type podSpec struct {
	RestartPolicy                string              `json:"restartPolicy,omitempty"`
	AutomountServiceAccountToken *bool               `json:"automountServiceAccountToken,omitempty"`
	EnableServiceLinks           *bool               `json:"enableServiceLinks,omitempty"`
	SecurityContext              *podSecurityContext `json:"securityContext,omitempty"`
	Containers                   []container         `json:"containers"`
	Volumes                      []volume            `json:"volumes,omitempty"`
}

type podSecurityContext struct {
	FSGroup *int64 `json:"fsGroup,omitempty"`
}

type container struct {
	Name            string           `json:"name"`
	Image           string           `json:"image"`
	Command         []string         `json:"command,omitempty"`
	Env             []envVar         `json:"env,omitempty"`
	WorkingDir      string           `json:"workingDir,omitempty"`
	VolumeMounts    []volumeMount    `json:"volumeMounts,omitempty"`
	Resources       resources        `json:"resources,omitzero"`
	SecurityContext *securityContext `json:"securityContext,omitempty"`
}

type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type volumeMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

// resources maps "cpu" and "memory" to Kubernetes quantities.
type resources struct {
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
}

type securityContext struct {
	RunAsNonRoot             *bool         `json:"runAsNonRoot,omitempty"`
	RunAsUser                *int64        `json:"runAsUser,omitempty"`
	RunAsGroup               *int64        `json:"runAsGroup,omitempty"`
	AllowPrivilegeEscalation *bool         `json:"allowPrivilegeEscalation,omitempty"`
	ReadOnlyRootFilesystem   *bool         `json:"readOnlyRootFilesystem,omitempty"`
	Capabilities             *capabilities `json:"capabilities,omitempty"`
}

type capabilities struct {
	Drop []string `json:"drop,omitempty"`
}

type volume struct {
	Name     string        `json:"name"`
	Secret   *secretVolume `json:"secret,omitempty"`
	EmptyDir *struct{}     `json:"emptyDir,omitempty"`
}

type secretVolume struct {
	SecretName  string `json:"secretName"`
	DefaultMode *int32 `json:"defaultMode,omitempty"`
}

type jobStatus struct {
	Conditions []condition `json:"conditions,omitempty"`
}

type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Job condition types, and the reason of a Job stopped at its deadline.
const (
	jobComplete            = "Complete"
	jobFailed              = "Failed"
	conditionTrue          = "True"
	reasonDeadlineExceeded = "DeadlineExceeded"
)

// Pod phases in which the agent's container has started: its log exists.
const (
	podRunning   = "Running"
	podSucceeded = "Succeeded"
	podFailed    = "Failed"
)

type pod struct {
	Metadata objectMeta `json:"metadata"`
	Status   struct {
		Phase             string            `json:"phase,omitempty"`
		ContainerStatuses []containerStatus `json:"containerStatuses,omitempty"`
	} `json:"status"`
}

type containerStatus struct {
	Name  string `json:"name"`
	State struct {
		Terminated *struct {
			ExitCode int32  `json:"exitCode"`
			Reason   string `json:"reason,omitempty"`
		} `json:"terminated,omitempty"`
	} `json:"state"`
}

type podList struct {
	Metadata listMeta `json:"metadata"`
	Items    []pod    `json:"items"`
}

// watchEvent is one line of a watch: ADDED, MODIFIED, DELETED, BOOKMARK
// or ERROR (its object then a Status).
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

const (
	eventDeleted = "DELETED"
	eventError   = "ERROR"
)

// apiError is a request the apiserver refused, from the Status it
// answered with.
type apiError struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func (e *apiError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("the apiserver answered %d %s", e.Code, http.StatusText(e.Code))
	}
	return e.Message
}

// isNotFound and isAlreadyExists read an apiserver's refusal as client-go
// does: by the Status's reason, or its code when it gives none.
func isNotFound(err error) bool { return statusIs(err, "NotFound", http.StatusNotFound) }

func isAlreadyExists(err error) bool { return statusIs(err, "AlreadyExists", http.StatusConflict) }

func statusIs(err error, reason string, code int) bool {
	var e *apiError
	if !errors.As(err, &e) {
		return false
	}
	if e.Reason != "" {
		return e.Reason == reason
	}
	return e.Code == code
}
