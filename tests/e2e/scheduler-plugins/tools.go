//go:build tools

// Package tools pins scheduler-plugins, whose PodGroup CRD, PodGroup controller and
// kube-scheduler built with its plugins serve the coscheduling comparison
// (tests/e2e/test-coscheduling-upstream.sh, built by tests/e2e/build-scheduler-plugins.sh).
// v0.30.6 is the release the Go module proxy here serves (Kubeflow Trainer v2.0.0 requires it);
// newer ones are not served. It is a module of its own so that its Kubernetes v1.30 libraries
// never move those of ../kube.
package tools

import (
	_ "sigs.k8s.io/scheduler-plugins/cmd/controller"
	_ "sigs.k8s.io/scheduler-plugins/cmd/scheduler"
)
