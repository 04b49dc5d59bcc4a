//go:build tools

// Package tools pins the main packages that build-control-plane.sh builds, so that
// `go mod tidy` keeps their dependencies in go.mod/go.sum.
package tools

import (
	_ "go.etcd.io/etcd/server/v3" // the etcd binary (module root is package main)
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
