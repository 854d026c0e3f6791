package util

import (
	"context"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/controller/job"
)

// RunJobController runs kube-controller-manager's Job controller in the test's process until the
// test ends: no kube-controller-manager runs beside the in-process API server, and a Job's pods (or
// their refusals, as FailedCreate events) come from it.
func RunJobController(t *testing.T, kube kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factory := informers.NewSharedInformerFactory(kube, 0)
	jc, err := job.NewController(ctx, kube, factory.Core().V1().Pods(), factory.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		t.Fatalf("Job controller: %v", err)
	}
	factory.Start(ctx.Done())
	go jc.Run(ctx, 2)
}
