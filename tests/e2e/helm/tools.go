//go:build tools

// Package tools pins the helm CLI that tests/e2e/build-helm.sh builds for the chart test
// (tests/e2e/test-helm-chart.sh). It is a module of its own so that helm's dependencies never
// move those of kube-apiserver and kube-scheduler in ../kube.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
