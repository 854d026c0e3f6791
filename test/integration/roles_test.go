package integration

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
	"github.com/queue-scheduler/queue-scheduler/pkg/queueclient"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// as returns clients that act as user, through impersonation.
func as(t *testing.T, user string) (kubernetes.Interface, versioned.Interface) {
	t.Helper()
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	queues, err := queueclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg), queues
}

// bind binds user to the ClusterRole role, in namespace or cluster-wide, and waits until the API
// server's authorizer allows user what probe asks: RBAC authorizes from its own informers, so a
// binding that was just created is not yet in force.
func bind(t *testing.T, namespace, role, user string, probe authorizationv1.ResourceAttributes) {
	t.Helper()
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
	name := user + "-" + role
	var err error
	if namespace == "" {
		_, err = cluster.Kube.RbacV1().ClusterRoleBindings().Create(context.Background(),
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject, RoleRef: ref}, metav1.CreateOptions{})
		t.Cleanup(func() {
			_ = cluster.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	} else {
		_, err = cluster.Kube.RbacV1().RoleBindings(namespace).Create(context.Background(),
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject, RoleRef: ref}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("bind %s to %s: %v", role, user, err)
	}
	waitAllowed(t, user, probe)
}

func waitAllowed(t *testing.T, user string, probe authorizationv1.ResourceAttributes) {
	t.Helper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: []string{"system:authenticated"}, ResourceAttributes: &probe}}
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		got, err := cluster.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		return err == nil && got.Status.Allowed, nil
	})
	if err != nil {
		t.Fatalf("%s not allowed to %s %s in %q within %s", user, probe.Verb, probe.Resource, probe.Namespace, settle)
	}
}

func wantForbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: got %v, want Forbidden", what, err)
	}
}

func wantAllowed(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// The shipped roles, on an API server that authorizes with RBAC: a namespace editor submits work and
// operates the queue that selects the namespace, but edits no queue and touches no other namespace;
// a viewer reads the work; the queue admin edits queues.
func TestShippedRoles(t *testing.T) {
	f := setUpTenants(t, "ten-rbac")
	queues := func(verb string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Group: schedulingv1beta1.GroupName, Resource: "queues"}
	}
	bind(t, f.nsA, "edit", "alice", authorizationv1.ResourceAttributes{
		Namespace: f.nsA, Verb: "create", Group: busv1alpha1.GroupName, Resource: "commands"})
	bind(t, f.nsA, "view", "victor", authorizationv1.ResourceAttributes{
		Namespace: f.nsA, Verb: "list", Group: schedulingv1beta1.GroupName, Resource: "podgroups"})
	bind(t, "", "queue-scheduler-queue-viewer", "alice", queues("get"))
	bind(t, "", "queue-scheduler-queue-admin", "ada", queues("patch"))
	ctx := context.Background()

	aliceKube, alice := as(t, "alice")
	pg := util.MakePodGroup(f.nsA, "job").Queue(f.qA).MinMember(1).Obj()
	_, err := alice.SchedulingV1beta1().PodGroups(f.nsA).Create(ctx, pg, metav1.CreateOptions{})
	wantAllowed(t, "alice creates a PodGroup in her namespace", err)
	_, err = aliceKube.CoreV1().Pods(f.nsA).Create(ctx, queuePod(f.nsA, f.qA)("job-0"), metav1.CreateOptions{})
	wantAllowed(t, "alice creates a pod in her namespace", err)
	_, err = alice.SchedulingV1beta1().QueueUnits(f.nsA).Create(ctx, queueUnit(f.nsA, "unit", f.qA), metav1.CreateOptions{})
	wantAllowed(t, "alice creates a QueueUnit in her namespace", err)
	cmd := &busv1alpha1.Command{ObjectMeta: metav1.ObjectMeta{GenerateName: "suspend-", Namespace: f.nsA},
		Spec: busv1alpha1.CommandSpec{Action: busv1alpha1.SuspendQueue, Target: busv1alpha1.Target{Name: f.qA}}}
	_, err = alice.BusV1alpha1().Commands(f.nsA).Create(ctx, cmd, metav1.CreateOptions{})
	wantAllowed(t, "alice suspends her team's queue by Command", err)
	waitSpecState(t, f.qA, schedulingv1beta1.QueueStateSuspended)
	_, err = alice.SchedulingV1beta1().Queues().Get(ctx, f.qA, metav1.GetOptions{})
	wantAllowed(t, "alice reads her queue", err)
	_, err = alice.SchedulingV1beta1().Queues().Patch(ctx, f.qA, types.MergePatchType, []byte(`{"spec":{"weight":9}}`), metav1.PatchOptions{})
	wantForbidden(t, "alice edits her queue", err)
	_, err = alice.SchedulingV1beta1().Queues().Create(ctx, util.MakeQueue("alice-own").Obj(), metav1.CreateOptions{})
	wantForbidden(t, "alice creates a queue", err)
	_, err = alice.SchedulingV1beta1().PodGroups(f.nsB).Create(ctx, util.MakePodGroup(f.nsB, "job").Queue(f.qB).Obj(), metav1.CreateOptions{})
	wantForbidden(t, "alice creates a PodGroup in another team's namespace", err)
	_, err = alice.BusV1alpha1().Commands(f.nsB).Create(ctx, cmd, metav1.CreateOptions{})
	wantForbidden(t, "alice creates a Command in another team's namespace", err)

	_, victor := as(t, "victor")
	_, err = victor.SchedulingV1beta1().PodGroups(f.nsA).List(ctx, metav1.ListOptions{})
	wantAllowed(t, "victor lists the PodGroups", err)
	_, err = victor.SchedulingV1beta1().QueueUnits(f.nsA).Get(ctx, "unit", metav1.GetOptions{})
	wantAllowed(t, "victor reads a QueueUnit", err)
	_, err = victor.SchedulingV1beta1().PodGroups(f.nsA).Create(ctx, util.MakePodGroup(f.nsA, "other").Queue(f.qA).Obj(), metav1.CreateOptions{})
	wantForbidden(t, "victor creates a PodGroup", err)
	_, err = victor.BusV1alpha1().Commands(f.nsA).Create(ctx, cmd, metav1.CreateOptions{})
	wantForbidden(t, "victor creates a Command", err)

	_, ada := as(t, "ada")
	_, err = ada.SchedulingV1beta1().Queues().Patch(ctx, f.qA, types.MergePatchType, []byte(`{"spec":{"state":"Open"}}`), metav1.PatchOptions{})
	wantAllowed(t, "the queue admin opens the queue", err)

	// The forecast's snapshot shows every namespace's work: the queue admin's to read.
	waitViewServed(t)
	_, err = ada.VisibilityV1beta1().ForecastSnapshots().Get(ctx, visibilityv1beta1.CurrentSnapshot, metav1.GetOptions{})
	wantAllowed(t, "the queue admin reads the forecast's snapshot", err)
	_, err = alice.VisibilityV1beta1().ForecastSnapshots().Get(ctx, visibilityv1beta1.CurrentSnapshot, metav1.GetOptions{})
	wantForbidden(t, "alice, a namespace's editor and a queue viewer, reads the forecast's snapshot", err)
	_, err = victor.VisibilityV1beta1().ForecastSnapshots().Get(ctx, visibilityv1beta1.CurrentSnapshot, metav1.GetOptions{})
	wantForbidden(t, "victor reads the forecast's snapshot", err)
}
