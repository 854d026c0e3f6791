package kubectlqueue

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
)

// strayAt is when the Jobs of these tests were created.
var strayAt = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// strayJob is a running Job of queue-scheduler in namespace team-a whose template has labels.
func strayJob(name string, labels map[string]string) *batchv1.Job {
	uid := types.UID(name + "-uid")
	selector := map[string]string{batchv1.ControllerUidLabel: string(uid)}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: uid, CreationTimestamp: metav1.NewTime(strayAt)},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{SchedulerName: schedulingv1beta1.SchedulerName}}},
		Status: batchv1.JobStatus{StartTime: ptr.To(metav1.NewTime(strayAt))},
	}
}

// jobPodOf is a pod of job created seconds after the Job, with labels besides the Job's.
func jobPodOf(job *batchv1.Job, name string, seconds int, labels map[string]string) *v1.Pod {
	all := map[string]string{batchv1.ControllerUidLabel: string(job.UID)}
	for k, v := range labels {
		all[k] = v
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: name, Labels: all,
			CreationTimestamp: metav1.NewTime(strayAt.Add(time.Duration(seconds) * time.Second)),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID,
				Controller: ptr.To(true)}}},
		Spec:   v1.PodSpec{SchedulerName: schedulingv1beta1.SchedulerName},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

// failedCreateOf is the Job controller's event for a pod of job it could not create, seconds after
// the Job was.
func failedCreateOf(job *batchv1.Job, seconds int, message string) *v1.Event {
	return &v1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name + ".failed"},
		InvolvedObject: v1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: job.Namespace, Name: job.Name,
			UID: job.UID},
		Reason: failedCreate, Type: v1.EventTypeWarning, Message: "Error creating: " + message,
		LastTimestamp: metav1.NewTime(strayAt.Add(time.Duration(seconds) * time.Second)),
	}
}

// denied is how the API server reports the webhook's refusal of a pod.
func denied(words string) string {
	return `admission webhook "pods.queue-scheduler.io" denied the request: ` + words
}

// forbidListing refuses the lists of every namespace's objects of resources (all for none named),
// as RBAC refuses a user who has a namespace role only.
func forbidListing(client *k8stesting.Fake, namespace string, resources ...string) {
	client.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() != namespace || (len(resources) > 0 && !slices.Contains(resources, a.GetResource().Resource)) {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(a.GetResource().GroupResource(), "", errors.New("no role grants it"))
	})
}

// kubeconfigIn writes a kubeconfig whose context is in namespace, and returns its path.
func kubeconfigIn(t *testing.T, namespace string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	config := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: ` + namespace + `}}]
current-context: c
`
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// `jobs` lists a Job whose pods are refused at creation, with the refusal's words, and a Job whose
// pods wait for a PodGroup that does not exist, with their reason: under the queue the Job's pods
// name when it exists, else under each queue that takes work from the Job's namespace.
func TestJobsListsStrayJobs(t *testing.T) {
	teamA := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"team": "a"}}}
	annotated := teamA.DeepCopy()
	annotated.Annotations = map[string]string{schedulingv1beta1.QueueAnnotation: "team-a"}
	queues := []runtime.Object{
		&schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: schedulingv1beta1.RootQueue}},
		&schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: schedulingv1beta1.DefaultQueue},
			Spec: schedulingv1beta1.QueueSpec{NamespaceSelector: &metav1.LabelSelector{}}},
		&schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "team-a"},
			Spec: schedulingv1beta1.QueueSpec{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}},
		&schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "team-b"},
			Spec: schedulingv1beta1.QueueSpec{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}}},
	}
	queueLabel := func(q string) map[string]string { return map[string]string{schedulingv1beta1.QueueLabel: q} }

	typo := strayJob("typo", queueLabel("team-aa"))
	notFound := `Pod "team-a/": metadata.labels[scheduling.queue-scheduler.io/queue]: Not found: "team-aa"`
	elsewhere := strayJob("elsewhere", queueLabel("team-b"))
	notSelected := `Pod "team-a/": metadata.labels[scheduling.queue-scheduler.io/queue]: Forbidden: queue "team-b" does not accept work from namespace "team-a": its spec.namespaceSelector "team=b" does not select the namespace's labels`
	byNamespace := strayJob("by-namespace", nil)
	closed := `Pod "team-a/": metadata.namespace: Forbidden: queue "team-a" is Closed: it accepts no new work`
	gang := strayJob("gang", map[string]string{schedulingv1beta1.PodGroupLabel: "trian"})
	gangPod := jobPodOf(gang, "gang-x7k2p", 1, map[string]string{schedulingv1beta1.PodGroupLabel: "trian"})
	missing := `PodGroup "trian" of pod team-a/gang-x7k2p does not exist`
	gangPod.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: podGroupMissing, Message: missing}}
	sweep := strayJob("sweep", queueLabel("team-a"))
	sweep.Spec.Parallelism = ptr.To[int32](2)
	running := jobPodOf(sweep, "sweep-0", 0, queueLabel("team-a"))
	running.Spec.NodeName = "n1"
	done := strayJob("done", queueLabel("team-aa"))
	done.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: v1.ConditionTrue}}
	foreign := strayJob("foreign", nil)
	foreign.Spec.Template.Spec.SchedulerName = v1.DefaultSchedulerName

	for _, tt := range []struct {
		name      string
		namespace *v1.Namespace
		objects   []runtime.Object
		// tenant: the user has the namespace role edit in team-a and the shipped queue viewer role:
		// the lists of every namespace's work, and of the namespaces, are refused.
		tenant bool
		// noEvents: the user may not list events either.
		noEvents bool
		want     map[string][]string
		wantNote string
	}{
		{
			name:    "a queue that does not exist: under each queue that takes the namespace, in the webhook's words",
			objects: []runtime.Object{typo, failedCreateOf(typo, 5, denied(notFound))},
			want: map[string][]string{
				"team-a":  {"Job team-a typo Pending 0/1 " + notFound},
				"default": {"Job team-a typo Pending 0/1 " + notFound},
				"team-b":  nil,
			},
		},
		{
			name:    "a queue that does not take the namespace: under that queue, with why",
			objects: []runtime.Object{elsewhere, failedCreateOf(elsewhere, 5, denied(notSelected))},
			want: map[string][]string{
				"team-b":  {"Job team-a elsewhere Pending 0/1 " + notSelected},
				"team-a":  nil,
				"default": nil,
			},
		},
		{
			name:      "a Job that names no queue: under its namespace's queue",
			namespace: annotated,
			objects:   []runtime.Object{byNamespace, failedCreateOf(byNamespace, 5, denied(closed))},
			want: map[string][]string{
				"team-a":  {"Job team-a by-namespace Pending 0/1 " + closed},
				"default": nil,
			},
		},
		{
			name:    "pods that wait for a PodGroup that does not exist: the Job under each queue that takes the namespace, with their reason",
			objects: []runtime.Object{gang, gangPod},
			want: map[string][]string{
				"team-a":  {"Job team-a gang Pending 0/1 " + missing},
				"default": {"Job team-a gang Pending 0/1 " + missing},
				"team-b":  nil,
			},
		},
		{
			name:    "a refusal after the Job's newest pod: the Job waits for it",
			objects: []runtime.Object{sweep, running, failedCreateOf(sweep, 60, denied(closed))},
			want:    map[string][]string{"team-a": {"Job team-a sweep Running 1/2 " + closed}},
		},
		{
			name:    "a refusal before the Job's newest pod is over",
			objects: []runtime.Object{sweep, running, failedCreateOf(sweep, 0, denied(closed))},
			want:    map[string][]string{"team-a": {"Job team-a sweep Running 1/2 "}},
		},
		{
			name: "the recorder's aggregate of the refusals of several pods: the webhook's words",
			objects: []runtime.Object{typo, func() *v1.Event {
				e := failedCreateOf(typo, 5, denied(notFound))
				e.Message = "(combined from similar events): " + e.Message
				return e
			}()},
			want: map[string][]string{"team-a": {"Job team-a typo Pending 0/1 " + notFound}},
		},
		{
			name:    "a finished Job: not listed",
			objects: []runtime.Object{done, failedCreateOf(done, 5, denied(notFound))},
			want:    map[string][]string{"team-a": nil, "default": nil},
		},
		{
			name:    "a Job of another scheduler: none of a queue's",
			objects: []runtime.Object{foreign, failedCreateOf(foreign, 5, `pods "foreign-x" is forbidden: exceeded quota: q`)},
			want:    map[string][]string{"team-a": nil, "default": nil},
		},
		{
			name:    "a tenant: reads her namespace and its events, and sees her typo under her team's queue",
			objects: []runtime.Object{typo, failedCreateOf(typo, 5, denied(notFound)), gang, gangPod},
			tenant:  true,
			want: map[string][]string{
				"team-a": {"Job team-a gang Pending 0/1 " + missing, "Job team-a typo Pending 0/1 " + notFound},
				"team-b": nil,
			},
			wantNote: `note: listing namespace "team-a" only`,
		},
		{
			name:     "a user who may not read events: the Job says that it has no pods",
			objects:  []runtime.Object{typo, failedCreateOf(typo, 5, denied(notFound))},
			tenant:   true,
			noEvents: true,
			want:     map[string][]string{"team-a": {"Job team-a typo Pending 0/1 " + noPodsCreated}},
			wantNote: `note: you may not list the events of namespace "team-a"`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			namespace := tt.namespace
			if namespace == nil {
				namespace = teamA
			}
			kube := kubefake.NewClientset(append([]runtime.Object{namespace}, tt.objects...)...)
			client := fake.NewSimpleClientset(queues...)
			if tt.tenant {
				forbidListing(&kube.Fake, metav1.NamespaceAll)
				forbidListing(&client.Fake, metav1.NamespaceAll, "podgroups", "queueunits")
			}
			if tt.noEvents {
				forbidListing(&kube.Fake, "team-a", "events")
			}
			flags := genericclioptions.NewConfigFlags(false)
			flags.KubeConfig = ptr.To(kubeconfigIn(t, "team-a"))
			var errOut bytes.Buffer
			o := &Options{IOStreams: genericiooptions.IOStreams{Out: &bytes.Buffer{}, ErrOut: &errOut}, ConfigFlags: flags,
				Now: func() time.Time { return strayAt.Add(time.Hour) }, kube: kube, queues: client}
			got := map[string][]string{}
			for queue := range tt.want {
				jobs, err := o.jobsOf(context.Background(), queue)
				if err != nil {
					t.Fatalf("jobs %s: %v", queue, err)
				}
				got[queue] = nil
				for _, j := range jobs {
					got[queue] = append(got[queue], j.kind+" "+j.namespace+" "+j.name+" "+j.phase+" "+j.members+" "+j.waiting)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rows by queue (-want,+got):\n%s", diff)
			}
			if !strings.Contains(errOut.String(), tt.wantNote) || (tt.wantNote == "" && errOut.Len() > 0) {
				t.Errorf("notes %q, want %q", errOut.String(), tt.wantNote)
			}
		})
	}
}

// A refusal is read in the words of whoever refused the pod.
func TestRefusalWords(t *testing.T) {
	for _, tt := range []struct {
		name, message, want string
	}{
		{"the webhook's", `Error creating: admission webhook "pods.queue-scheduler.io" denied the request: Pod "ns/": spec.queue: Not found: "x"`,
			`Pod "ns/": spec.queue: Not found: "x"`},
		{"the API server's", `Error creating: pods "p" is forbidden: exceeded quota: q`, `pods "p" is forbidden: exceeded quota: q`},
		{"the webhook down", `Error creating: Internal error occurred: failed calling webhook "pods.queue-scheduler.io": connection refused`,
			`Internal error occurred: failed calling webhook "pods.queue-scheduler.io": connection refused`},
		{"aggregated", `(combined from similar events): Error creating: admission webhook "w" denied the request: no`, "no"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, refusalWords(tt.message)); diff != "" {
				t.Errorf("words (-want,+got):\n%s", diff)
			}
		})
	}
}
