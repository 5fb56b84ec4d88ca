package kubernetes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/kubernetes/kubetest"
)

// TestClientSpeaksToTheAPIServer: the client's own requests against a real
// apiserver, as a token's holder (the runtime tests use a certificate):
// what it writes reads back, and each refusal the runtime acts on —
// missing, already there, not allowed — is recognised as such.
func TestClientSpeaksToTheAPIServer(t *testing.T) {
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "client-wire")
	ctx := t.Context()
	cl, err := new(Clients).For(c.TokenKubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := cl.getJob(ctx, ns, "none"); !isNotFound(err) {
		t.Errorf("get a missing Job: %v, want NotFound", err)
	}
	if err := cl.deleteSecret(ctx, ns, "none"); !isNotFound(err) {
		t.Errorf("delete a missing Secret: %v, want NotFound", err)
	}
	s := &secret{Metadata: objectMeta{Name: "s1", Labels: map[string]string{"a": "b"}}, Type: "Opaque", Data: map[string][]byte{"k": []byte("v\x00w")}}
	if err := cl.createSecret(ctx, ns, s); err != nil {
		t.Fatalf("create a Secret: %v", err)
	}
	if err := cl.createSecret(ctx, ns, s); !isAlreadyExists(err) || !strings.Contains(err.Error(), `secrets "s1" already exists`) {
		t.Errorf("create it again: %v, want AlreadyExists", err)
	}
	got := &secret{}
	if err := cl.call(ctx, "GET", nsPath(coreV1, ns, "secrets", "s1"), nil, nil, got, ""); err != nil || string(got.Data["k"]) != "v\x00w" || got.Metadata.Labels["a"] != "b" {
		t.Errorf("read it back: %+v, %v", got, err)
	}
	if err := cl.mergePatchSecret(ctx, ns, "s1", []byte(`{"metadata":{"labels":{"c":"d"}}}`)); err != nil {
		t.Errorf("merge-patch it: %v", err)
	}
	if err := cl.call(ctx, "GET", nsPath(coreV1, ns, "secrets", "s1"), nil, nil, got, ""); err != nil || got.Metadata.Labels["c"] != "d" || got.Metadata.Labels["a"] != "b" {
		t.Errorf("the patch merged to labels %v, %v", got.Metadata.Labels, err)
	}
	if err := cl.deleteSecret(ctx, ns, "s1"); err != nil {
		t.Errorf("delete it: %v", err)
	}

	// A token the apiserver does not know.
	bad := filepath.Join(t.TempDir(), "kubeconfig")
	kc, err := os.ReadFile(c.TokenKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(strings.ReplaceAll(string(kc), kubetest.AdminToken, "not-a-token")), 0o600); err != nil {
		t.Fatal(err)
	}
	stranger, err := new(Clients).For(bad)
	if err != nil {
		t.Fatal(err)
	}
	_, err = stranger.listPods(ctx, ns, "")
	var ae *apiError
	if !errors.As(err, &ae) || ae.Code != 401 || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("list pods with an unknown token: %v, want 401 Unauthorized", err)
	}
}
