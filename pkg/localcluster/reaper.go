package localcluster

import (
	"context"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// startReaper stands in for the kubelets of the fake nodes in one respect: a bound pod being deleted
// (evicted, preempted) stops at once, so its deletion completes as on a real node whose containers
// exit. Without it, such a pod would stay Terminating forever.
func startReaper(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods().Informer()
	reap := func(obj any) {
		pod, ok := obj.(*v1.Pod)
		if !ok || pod.DeletionTimestamp == nil || pod.Spec.NodeName == "" {
			return
		}
		err := client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0),
			Preconditions:      &metav1.Preconditions{UID: &pod.UID},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "Could not finish a terminating pod", "pod", klog.KObj(pod))
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    reap,
		UpdateFunc: func(_, obj any) { reap(obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	return nil
}
