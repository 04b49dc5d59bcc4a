// A dynamic provisioner for the end-to-end tests, built from the sig-storage external-provisioner
// library (sigs.k8s.io/sig-storage-lib-external-provisioner) as real provisioners are: it
// watches claims of StorageClasses whose provisioner is its name, and for each one that the
// PersistentVolume controller hands it (volume.kubernetes.io/storage-provisioner annotation) it
// creates a hostPath PersistentVolume under -root, pinned by nodeAffinity to the node the
// scheduler selected (volume.kubernetes.io/selected-node, for WaitForFirstConsumer classes).
// It creates no real storage: the tests have no kubelet; what they check is the API side.
// A claim annotated kubesched.e2e/fail-once: "true" is refused the first time, with
// ProvisioningReschedule: the library then removes its selected-node annotation, which tells
// the scheduler to pick a node again (the failure path of VolumeBinding's PreBind).
//
// Usage: provisioner -kubeconfig FILE [-name kubesched.e2e/hostpath] [-root DIR]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

type hostPathProvisioner struct {
	root   string
	failed sync.Map // claim uid -> true once a fail-once claim was refused
}

// Provision makes a PV that matches the claim: its capacity, access modes and volume mode, the
// class, and the selected node's hostname as the only node it may be used on.
func (p *hostPathProvisioner) Provision(ctx context.Context, o controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	if o.PVC.Annotations["kubesched.e2e/fail-once"] == "true" {
		if _, done := p.failed.LoadOrStore(string(o.PVC.UID), true); !done {
			klog.InfoS("refused once", "claim", klog.KObj(o.PVC), "node", o.SelectedNodeName)
			return nil, controller.ProvisioningReschedule, fmt.Errorf("e2e: told to fail once on node %q", o.SelectedNodeName)
		}
	}
	path := filepath.Join(p.root, o.PVName)
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: o.PVName},
		Spec: v1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: *o.StorageClass.ReclaimPolicy,
			AccessModes:                   o.PVC.Spec.AccessModes,
			VolumeMode:                    o.PVC.Spec.VolumeMode,
			Capacity: v1.ResourceList{
				v1.ResourceStorage: o.PVC.Spec.Resources.Requests[v1.ResourceStorage],
			},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				HostPath: &v1.HostPathVolumeSource{Path: path},
			},
		},
	}
	if o.SelectedNodeName != "" {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
				Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: []string{o.SelectedNodeName},
			}}}},
		}}
	}
	klog.InfoS("provisioned", "pv", o.PVName, "claim", klog.KObj(o.PVC), "node", o.SelectedNodeName)
	return pv, controller.ProvisioningFinished, nil
}

// Delete has nothing to remove: no storage was made.
func (p *hostPathProvisioner) Delete(ctx context.Context, pv *v1.PersistentVolume) error {
	klog.InfoS("deleted", "pv", pv.Name)
	return nil
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	name := flag.String("name", "kubesched.e2e/hostpath", "provisioner name (StorageClass.provisioner)")
	root := flag.String("root", "/tmp/kubesched-e2e-hostpath", "where the hostPath volumes would live")
	klog.InitFlags(nil)
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "provisioner: %v\n", err)
		os.Exit(1)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "provisioner: %v\n", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	pc := controller.NewProvisionController(ctx, client, *name, &hostPathProvisioner{root: *root},
		controller.LeaderElection(false))
	pc.Run(ctx)
}
