package localcluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/controller/clusterroleaggregation"
	"sigs.k8s.io/yaml"

	"github.com/queue-scheduler/queue-scheduler/manifests"
)

// rolesTimeout bounds the wait for the namespace roles to take in the shipped ones.
const rolesTimeout = time.Minute

// startRoles creates the shipped ClusterRoles (manifests.Roles) and runs kube-controller-manager's
// aggregation controller until ctx ends, as a real cluster folds the aggregated ones into the
// namespace roles admin, edit and view; it returns once they are folded in.
func startRoles(ctx context.Context, client kubernetes.Interface) error {
	for _, doc := range strings.Split(string(manifests.Roles), "\n---\n") {
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal([]byte(doc), role); err != nil || role.Name == "" {
			return fmt.Errorf("decode a shipped role: %v\n%s", err, doc)
		}
		if _, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ClusterRole %s: %w", role.Name, err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	aggregation := clusterroleaggregation.NewClusterRoleAggregation(factory.Rbac().V1().ClusterRoles(), client.RbacV1())
	factory.Start(ctx.Done())
	go aggregation.Run(ctx, 1)
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, rolesTimeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range []string{"admin", "edit", "view"} {
			role, err := client.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !grants(role, "podgroups") {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the roles admin, edit and view did not take in the shipped roles within %s: %w", rolesTimeout, err)
	}
	return nil
}

// grants says whether a rule of role names resource.
func grants(role *rbacv1.ClusterRole, resource string) bool {
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, resource) {
			return true
		}
	}
	return false
}
