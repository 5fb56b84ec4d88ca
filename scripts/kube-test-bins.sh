#!/bin/sh
# Builds the Kubernetes control-plane binaries the kubernetes runtime's tests
# run against (kube-apiserver, kube-controller-manager and an embedded etcd),
# from the Go module proxy, once: they are cached in a directory named by
# their versions and the script prints that directory.
#
# k8s.io/kubernetes cannot be `go install`ed (its go.mod replaces the
# staging modules with local paths), so it is built from a throwaway module
# that requires it and pins every staging module to its published version.
set -eu

KUBE_VERSION=v1.37.2
STAGING_VERSION=v0.37.2
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/helix-org/kube-$KUBE_VERSION"
BIN="$CACHE/bin"

if [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-controller-manager" ] && [ -x "$BIN/etcd" ]; then
	echo "$BIN"
	exit 0
fi

# Two test binaries may ask at once: one builds, the other waits for it.
mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
flock 9
if [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-controller-manager" ] && [ -x "$BIN/etcd" ]; then
	echo "$BIN"
	exit 0
fi

SRC="$CACHE/src"
mkdir -p "$SRC/etcd" "$BIN"
cd "$SRC"

{
	echo "module helix-org.invalid/kubebins"
	echo
	echo "go 1.26.0"
	echo
	echo "replace ("
	for m in api apiextensions-apiserver apimachinery apiserver cli-runtime client-go \
		cloud-provider cluster-bootstrap code-generator component-base component-helpers \
		controller-manager cri-api cri-client cri-streaming csi-translation-lib \
		dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator \
		kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics \
		mount-utils pod-security-admission sample-apiserver sample-cli-plugin \
		sample-controller streaming; do
		echo "	k8s.io/$m => k8s.io/$m $STAGING_VERSION"
	done
	echo ")"
} >go.mod

# etcd, embedded: a single member on the client URL given as the first argument,
# its data in the directory given as the second.
cat >etcd/main.go <<'GO'
package main

import (
	"log"
	"net/url"
	"os"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	if len(os.Args) != 4 {
		log.Fatal("usage: etcd CLIENT_URL PEER_URL DATA_DIR")
	}
	client, err := url.Parse(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	peer, err := url.Parse(os.Args[2])
	if err != nil {
		log.Fatal(err)
	}
	cfg := embed.NewConfig()
	cfg.Dir = os.Args[3]
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	cfg.LogLevel = "error"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatal(err)
	}
	<-e.Server.ReadyNotify()
	log.Printf("etcd ready on %s", client)
	log.Fatal(<-e.Err())
}
GO

export CGO_ENABLED=0 GOFLAGS=-mod=mod
go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION" "k8s.io/kubernetes/cmd/kube-controller-manager@$KUBE_VERSION"
go get go.etcd.io/etcd/server/v3/embed
go mod tidy
rm -rf "$BIN.tmp"
go build -trimpath -ldflags='-s -w' -o "$BIN.tmp/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager ./etcd
mv "$BIN.tmp"/* "$BIN/"
rmdir "$BIN.tmp"
echo "$BIN"
