package rules

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// fakeView is a queue tree in memory, with the queues that hold work and the namespaces' labels.
type fakeView struct {
	queues     map[string]*schedulingv1beta1.Queue
	busy       map[string]bool
	namespaces map[string]map[string]string
}

func newView(qs ...*schedulingv1beta1.Queue) *fakeView {
	v := &fakeView{queues: map[string]*schedulingv1beta1.Queue{}, busy: map[string]bool{}, namespaces: map[string]map[string]string{}}
	for _, q := range qs {
		v.queues[q.Name] = q
	}
	return v
}

func (v *fakeView) Queue(name string) (*schedulingv1beta1.Queue, bool) {
	q, ok := v.queues[name]
	return q, ok
}
func (v *fakeView) QueueNames() []string { return slices.Collect(maps.Keys(v.queues)) }
func (v *fakeView) Children(name string) []*schedulingv1beta1.Queue {
	var out []*schedulingv1beta1.Queue
	for _, q := range v.queues {
		if q.Spec.Parent == name {
			out = append(out, q)
		}
	}
	return out
}
func (v *fakeView) HoldsWork(queue string) bool { return v.busy[queue] }
func (v *fakeView) NamespaceRefusal(q *schedulingv1beta1.Queue, namespace string) string {
	sel, err := metav1.LabelSelectorAsSelector(q.Spec.NamespaceSelector)
	if err != nil || !sel.Matches(labels.Set(v.namespaces[namespace])) {
		return fmt.Sprintf("queue %q does not accept work from namespace %q", q.Name, namespace)
	}
	return ""
}

func cpu(q string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: q} }

// wantErrors checks that errs holds exactly the wanted messages, each as a substring.
func wantErrors(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("errors: got %v, want %d matching %q", errs, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(errs[i].Error(), w) {
			t.Errorf("error %d: %q does not contain %q", i, errs[i].Error(), w)
		}
	}
}

func TestValidateQueueTree(t *testing.T) {
	view := newView(
		util.MakeQueue("p").Capability(cpu("10")).Guarantee(cpu("6")).Obj(),
		util.MakeQueue("a").Parent("p").Capability(cpu("10")).Guarantee(cpu("4")).Obj(),
		util.MakeQueue("b").Parent("a").Capability(cpu("10")).Obj(),
	)
	view.busy["busy"] = true
	view.queues["busy"] = util.MakeQueue("busy").Obj()
	view.queues["closed"] = util.MakeQueue("closed").State("Closed").StatusState("Closed").Obj()
	tests := []struct {
		name  string
		queue *schedulingv1beta1.Queue
		old   *schedulingv1beta1.Queue
		want  []string
	}{
		{name: "fits", queue: util.MakeQueue("c").Parent("p").Capability(cpu("5")).Guarantee(cpu("2")).Obj()},
		{name: "missing parent", queue: util.MakeQueue("c").Parent("nope").Obj(), want: []string{"spec.parent: Not found"}},
		{name: "missing parent kept on update", queue: util.MakeQueue("c").Parent("nope").State("Closed").Obj(),
			old: util.MakeQueue("c").Parent("nope").Obj()},
		{name: "cycle", queue: util.MakeQueue("p").Parent("b").Capability(cpu("10")).Obj(), old: util.MakeQueue("p").Obj(),
			want: []string{"makes a cycle: p -> b -> a -> p"}},
		{name: "capability above parent", queue: util.MakeQueue("c").Parent("p").Capability(cpu("11")).Obj(),
			want: []string{`spec.capability[cpu]: Invalid value: "11": exceeds parent queue "p"'s capability 10`}},
		{name: "guarantees over parent", queue: util.MakeQueue("c").Parent("p").Capability(cpu("5")).Guarantee(cpu("3")).Obj(),
			want: []string{"would sum to 7, above its own guarantee 6"}},
		{name: "own guarantee replaced, not added", queue: util.MakeQueue("a").Parent("p").Capability(cpu("10")).Guarantee(cpu("6")).Obj(),
			old: view.queues["a"]},
		{name: "guarantee above capability", queue: util.MakeQueue("c").Capability(cpu("1")).Guarantee(cpu("2")).Obj(),
			want: []string{"must not exceed spec.capability[cpu] (1)"}},
		{name: "parent with work", queue: util.MakeQueue("c").Parent("busy").Obj(), want: []string{`queue "busy" holds work (PodGroups, QueueUnits or pods)`}},
		{name: "open child under a closed parent", queue: util.MakeQueue("c").Parent("closed").Obj(),
			want: []string{`spec.state: Forbidden: parent queue "closed" is Closed: a queue placed under it must have spec.state Closed, not Open`}},
		{name: "suspended child moved under a closed parent", queue: util.MakeQueue("c").Parent("closed").State("Suspended").Obj(),
			old: util.MakeQueue("c").State("Suspended").Obj(), want: []string{`parent queue "closed" is Closed`}},
		{name: "closed child under a closed parent", queue: util.MakeQueue("c").Parent("closed").State("Closed").Obj()},
		{name: "parent's capability lowered below a child's", queue: util.MakeQueue("a").Parent("p").Capability(cpu("8")).Guarantee(cpu("4")).Obj(),
			old: view.queues["a"], want: []string{`spec.capability[cpu]: Invalid value: "8": is below child queue "b"'s capability (10)`}},
		{name: "parent's guarantee lowered below its children's sum", queue: util.MakeQueue("p").Capability(cpu("10")).Guarantee(cpu("3")).Obj(),
			old: view.queues["p"], want: []string{"spec.guarantee.resource[cpu]: Invalid value: \"3\": is below the sum of the children's guarantees (4)"}},
		{name: "unchanged capability is not judged again", queue: util.MakeQueue("p").Capability(cpu("10")).Guarantee(cpu("6")).State("Suspended").Obj(),
			old: view.queues["p"]},
		{name: "flat guarantee above capability", queue: flatGuarantee(t, util.MakeQueue("c").Capability(cpu("1")).Obj(), `{"cpu":"2"}`),
			want: []string{`spec.guarantee[cpu]: Invalid value: "2": must not exceed spec.capability[cpu] (1)`}},
		{name: "flat guarantees over parent", queue: flatGuarantee(t, util.MakeQueue("c").Parent("p").Capability(cpu("5")).Obj(), `{"cpu":"3"}`),
			want: []string{`spec.guarantee[cpu]: Invalid value: "3": the guarantees of parent queue "p"'s children would sum to 7`}},
		{name: "flat guarantee that is no quantity", queue: flatGuarantee(t, util.MakeQueue("c").Obj(), `{"cpu":"lots"}`),
			want: []string{`spec.guarantee[cpu]: Invalid value: "lots": must be a quantity of at least 0`}},
		{name: "guarantee of too many resources", queue: flatGuarantee(t, util.MakeQueue("c").Obj(), manyResources(17)),
			want: []string{"spec.guarantee: Too many: 17: must have at most 16 items"}},
		{name: "invalid namespace selector", queue: invalidSelector(util.MakeQueue("c").Obj()),
			want: []string{"spec.namespaceSelector.matchExpressions[0].operator: Invalid value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, ValidateQueue(tt.queue, tt.old, view), tt.want...)
		})
	}
}

func TestValidateDepth(t *testing.T) {
	view := newView()
	parent := ""
	for i := range MaxDepth {
		name := string(rune('a' + i))
		view.queues[name] = util.MakeQueue(name).Parent(parent).Obj()
		parent = name
	}
	wantErrors(t, ValidateQueue(util.MakeQueue("deep").Parent(parent).Obj(), nil, view), "at most 8 are allowed")
	wantErrors(t, ValidateQueue(util.MakeQueue("ok").Parent("g").Obj(), nil, view))

	// A subtree three levels deep fits under a queue five levels down, not under one six levels down.
	view.queues["s1"] = util.MakeQueue("s1").Obj()
	view.queues["s2"] = util.MakeQueue("s2").Parent("s1").Obj()
	view.queues["s3"] = util.MakeQueue("s3").Parent("s2").Obj()
	wantErrors(t, ValidateQueue(util.MakeQueue("s1").Parent("e").Obj(), util.MakeQueue("s1").Obj(), view))
	wantErrors(t, ValidateQueue(util.MakeQueue("s1").Parent("f").Obj(), util.MakeQueue("s1").Obj(), view),
		"spec.parent: Invalid value: \"f\": puts the deepest queue of its subtree 9 levels below the root; at most 8 are allowed")
}

// flatGuarantee gives q the guarantee decoded from text, as the API server sends it.
func flatGuarantee(t *testing.T, q *schedulingv1beta1.Queue, text string) *schedulingv1beta1.Queue {
	t.Helper()
	if err := json.Unmarshal([]byte(text), &q.Spec.Guarantee); err != nil {
		t.Fatal(err)
	}
	return q
}

func manyResources(n int) string {
	entries := make([]string, n)
	for i := range entries {
		entries[i] = fmt.Sprintf(`"example.com/r%d":"1"`, i)
	}
	return "{" + strings.Join(entries, ",") + "}"
}

func invalidSelector(q *schedulingv1beta1.Queue) *schedulingv1beta1.Queue {
	q.Spec.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Near"}}}
	return q
}

func TestValidateStateChange(t *testing.T) {
	view := newView(util.MakeQueue("closed-parent").State("Closed").StatusState("Closed").Obj())
	closed := util.MakeQueue("q").State("Closed").StatusState("Closed").Obj()
	cascaded := closed.DeepCopy()
	cascaded.Annotations = map[string]string{CascadedByAnnotation: "p", StateBeforeCascadeAnnotation: "Suspended"}
	restored := cascaded.DeepCopy()
	restored.Annotations = nil
	restored.Spec.State = schedulingv1beta1.QueueStateSuspended
	tests := []struct {
		name       string
		queue, old *schedulingv1beta1.Queue
		want       []string
	}{
		{name: "suspend a Closed queue", queue: util.MakeQueue("q").State("Suspended").Obj(), old: closed, want: []string{"only Open leaves Closed"}},
		{name: "open a Closed queue", queue: util.MakeQueue("q").State("Open").Obj(), old: closed},
		{name: "cascade restores Suspended", queue: restored, old: cascaded},
		{name: "open under a closed parent", queue: util.MakeQueue("q").Parent("closed-parent").State("Open").Obj(),
			old: util.MakeQueue("q").Parent("closed-parent").State("Closed").Obj(), want: []string{`parent queue "closed-parent" is Closed`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, ValidateQueue(tt.queue, tt.old, view), tt.want...)
		})
	}
}

func TestValidateQueueDeletion(t *testing.T) {
	view := newView(util.MakeQueue("child").Parent("parent").Obj())
	tests := []struct {
		name  string
		queue *schedulingv1beta1.Queue
		want  []string
	}{
		{name: "closed", queue: util.MakeQueue("q").StatusState("Closed").Obj()},
		{name: "open", queue: util.MakeQueue("q").StatusState("Open").Obj(), want: []string{`queue "q" is Open: close it first`}},
		{name: "closing", queue: util.MakeQueue("q").State("Closed").StatusState("Closing").Obj(), want: []string{"is Closing: close it first"}},
		{name: "default", queue: util.MakeQueue("default").StatusState("Closed").Obj(), want: []string{`queue "default" cannot be deleted`}},
		{name: "root", queue: util.MakeQueue("root").StatusState("Closed").Obj(), want: []string{`queue "root" cannot be deleted`}},
		{name: "with children", queue: util.MakeQueue("parent").StatusState("Closed").Obj(), want: []string{"has child queues"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, ValidateQueueDeletion(tt.queue, view), tt.want...)
		})
	}
}

func TestAcceptsWork(t *testing.T) {
	view := newView(
		util.MakeQueue("open").Obj(),
		util.MakeQueue("suspended").State("Suspended").StatusState("Suspended").Obj(),
		util.MakeQueue("closing").State("Closed").StatusState("Closing").Obj(),
		util.MakeQueue("closed").State("Closed").StatusState("Closed").Obj(),
		util.MakeQueue("unknown").Parent("gone").Obj(),
		util.MakeQueue("inner").Obj(),
		util.MakeQueue("leaf").Parent("inner").Obj(),
		util.MakeQueue("team-b").Namespaces(map[string]string{"team": "b"}).Obj(),
		util.MakeQueue("nobody").NoNamespaces().Obj(),
		util.MakeQueue("cycle-a").Parent("cycle-b").Obj(),
		util.MakeQueue("cycle-b").Parent("cycle-a").Obj(),
	)
	view.namespaces["ns"] = map[string]string{"team": "a"}
	tests := []struct {
		queue   string
		joining bool
		want    []string
	}{
		{queue: "open"}, {queue: "suspended"}, {queue: "closing", joining: true},
		{queue: "closing", want: []string{`queue "closing" is Closing: it accepts no new work`}},
		{queue: "closed", want: []string{`queue "closed" is Closed`}},
		{queue: "closed", joining: true, want: []string{`queue "closed" is Closed`}},
		{queue: "unknown", want: []string{`queue "unknown" is Unknown`}},
		{queue: "inner", want: []string{"only leaf queues take work"}},
		{queue: "missing", want: []string{`Not found: "missing"`}},
		{queue: "root", want: []string{"root of the queue hierarchy"}},
		{queue: "team-b", want: []string{`queue "team-b" does not accept work from namespace "ns"`}},
		{queue: "team-b", joining: true, want: []string{`queue "team-b" does not accept work from namespace "ns"`}},
		{queue: "nobody", want: []string{`queue "nobody" does not accept work from namespace "ns"`}},
		{queue: "cycle-a", want: []string{`queue "cycle-a" is Unknown: its parent chain is a cycle: cycle-a -> cycle-b -> cycle-a`}},
	}
	for _, tt := range tests {
		t.Run(tt.queue, func(t *testing.T) {
			wantErrors(t, AcceptsWork(field.NewPath("spec", "queue"), tt.queue, "ns", tt.joining, view), tt.want...)
		})
	}
}

func TestValidateQueueUnitUpdate(t *testing.T) {
	unit := func(queue string, priority int32, phase schedulingv1beta1.QueueUnitPhase) *schedulingv1beta1.QueueUnit {
		u := &schedulingv1beta1.QueueUnit{}
		u.Name, u.Namespace = "u", "ns"
		u.Spec.Queue, u.Spec.Priority = queue, &priority
		u.Spec.ConsumerRef = v1.ObjectReference{Kind: "Job", Name: "j"}
		u.Status.Phase = phase
		return u
	}
	view := newView()
	wantErrors(t, ValidateQueueUnit(unit("q", 2, ""), unit("q", 1, "Enqueued"), "q", view))
	wantErrors(t, ValidateQueueUnit(unit("other", 1, ""), unit("q", 1, "Enqueued"), "other", view), "spec.queue: Forbidden: only priority")
	wantErrors(t, ValidateQueueUnit(unit("q", 2, ""), unit("q", 1, "Dequeued"), "q", view),
		"QueueUnit ns/u was already Dequeued: its spec is immutable (the update arrived after the dequeue)")
}

func TestFitsCapability(t *testing.T) {
	view := newView(
		util.MakeQueue("org").Capability(cpu("20")).Obj(),
		util.MakeQueue("team").Parent("org").Capability(cpu("30")).Obj(),
		util.MakeQueue("free").Obj(),
	)
	request := func(q string) v1.ResourceList { return util.ResourceList(cpu(q)) }
	path := field.NewPath("spec", "minResources")
	wantErrors(t, FitsCapability(path, request("10"), "team", view))
	wantErrors(t, FitsCapability(path, request("25"), "team", view),
		`spec.minResources[cpu]: Invalid value: "25": the request exceeds the capability of queue "org": cpu 25 requested > 20; it cannot run until the capability is raised`)
	wantErrors(t, FitsCapability(path, request("40"), "team", view),
		`capability of queue "team": cpu 40 requested > 30`, `capability of queue "org": cpu 40 requested > 20`)
	wantErrors(t, FitsCapability(path, request("4000"), "free", view))
}

func TestValidateCommandTargets(t *testing.T) {
	view := newView(util.MakeQueue("team-a").Namespaces(map[string]string{"team": "a"}).Obj())
	view.namespaces["a-ns"] = map[string]string{"team": "a"}
	view.namespaces["b-ns"] = map[string]string{"team": "b"}
	command := func(namespace, queue string) *busv1alpha1.Command {
		cmd := &busv1alpha1.Command{}
		cmd.Namespace, cmd.Name = namespace, "c"
		cmd.Spec.Action, cmd.Spec.Target.Name = busv1alpha1.SuspendQueue, queue
		return cmd
	}
	wantErrors(t, ValidateCommand(command("a-ns", "team-a"), "queue-scheduler-system", view))
	wantErrors(t, ValidateCommand(command("queue-scheduler-system", "team-a"), "queue-scheduler-system", view))
	wantErrors(t, ValidateCommand(command("b-ns", "team-a"), "queue-scheduler-system", view),
		`spec.target.name: Forbidden: a Command may operate only a queue that selects its namespace, unless it comes from the scheduler's namespace "queue-scheduler-system": queue "team-a" does not accept work from namespace "b-ns"`)
	wantErrors(t, ValidateCommand(command("a-ns", "missing"), "queue-scheduler-system", view), `Not found: "missing"`)
}

func TestQueueLabelIsImmutable(t *testing.T) {
	labelled := func(queue string) *v1.Pod {
		pod := util.MakePod("ns", "p").Obj()
		if queue != "" {
			pod.Labels = map[string]string{schedulingv1beta1.QueueLabel: queue}
		}
		return pod
	}
	wantErrors(t, ValidateQueueLabelUnchanged(labelled("a"), labelled("a")))
	wantErrors(t, ValidateQueueLabelUnchanged(labelled("b"), labelled("a")), "a pod's queue is decided when it is created and cannot change")
	wantErrors(t, ValidateQueueLabelUnchanged(labelled(""), labelled("a")), "cannot change")
	wantErrors(t, ValidateQueueLabelUnchanged(labelled("a"), labelled("")), "cannot change")
}

func TestValidateOneGang(t *testing.T) {
	native := func(name string) *v1.PodSchedulingGroup { return &v1.PodSchedulingGroup{PodGroupName: &name} }
	tests := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		group       *v1.PodSchedulingGroup
		want        string
	}{
		{name: "none"},
		{name: "ours", labels: map[string]string{schedulingv1beta1.PodGroupLabel: "a"}},
		{name: "ours and the same foreign name", labels: map[string]string{schedulingv1beta1.PodGroupLabel: "a", schedulingv1beta1.SchedulerPluginsPodGroupLabel: "a"},
			annotations: map[string]string{schedulingv1beta1.VolcanoGroupNameAnnotation: "a"}, group: native("a")},
		{name: "scheduler-plugins and volcano", labels: map[string]string{schedulingv1beta1.SchedulerPluginsPodGroupLabel: "a"},
			annotations: map[string]string{schedulingv1beta1.VolcanoGroupNameAnnotation: "b"},
			want:        `metadata.annotations[scheduling.k8s.io/group-name]: Invalid value: "b": the pod already names PodGroup "a" in metadata.labels[scheduling.x-k8s.io/pod-group]; a pod belongs to one gang`},
		{name: "ours and native", labels: map[string]string{schedulingv1beta1.PodGroupLabel: "a"}, group: native("c"),
			want: `spec.schedulingGroup.podGroupName: Invalid value: "c": the pod already names PodGroup "a" in metadata.labels[scheduling.queue-scheduler.io/pod-group]`},
	}
	for _, tt := range tests {
		pod := util.MakePod("ns", "p").Obj()
		pod.Labels, pod.Annotations, pod.Spec.SchedulingGroup = tt.labels, tt.annotations, tt.group
		errs := ValidateOneGang(pod)
		if got := errs.ToAggregate(); (got == nil) != (tt.want == "") || (got != nil && !strings.Contains(got.Error(), tt.want)) {
			t.Errorf("%s: got %v, want %q", tt.name, got, tt.want)
		}
	}
}

// Work naming a queue that does not exist is told the closest name and the queues that take the
// namespace's work, its team's (selecting its labels) before those open to every namespace; closed,
// parent and root queues are not offered.
func TestMissingQueueSaysWhereToGo(t *testing.T) {
	view := newView(
		util.MakeQueue("team-a").Namespaces(map[string]string{"team": "a"}).Obj(),
		util.MakeQueue("team-b").Namespaces(map[string]string{"team": "b"}).Obj(),
		util.MakeQueue("default").Obj(),
		util.MakeQueue("shut").State("Closed").StatusState("Closed").Obj(),
		util.MakeQueue("org").Obj(),
		util.MakeQueue("ml").Parent("org").Obj(),
		util.MakeQueue("root").Obj(),
	)
	view.namespaces["a-ns"] = map[string]string{"team": "a"}
	path := field.NewPath("spec", "queue")
	for _, tt := range []struct {
		name, queue, namespace, want string
	}{
		{name: "a slip", queue: "team-aa", namespace: "a-ns",
			want: `spec.queue: Not found: "team-aa": no queue of that name exists; did you mean "team-a"?; ` +
				`queues that take work from namespace "a-ns": team-a, default, ml`},
		{name: "nothing near", queue: "analytics", namespace: "a-ns",
			want: `spec.queue: Not found: "analytics": no queue of that name exists; queues that take work from namespace "a-ns": team-a, default, ml`},
		{name: "another team's queue is never named", queue: "tema-b", namespace: "c-ns",
			want: `spec.queue: Not found: "tema-b": no queue of that name exists; queues that take work from namespace "c-ns": default, ml`},
		{name: "a closed queue is never suggested", queue: "shutt", namespace: "a-ns",
			want: `spec.queue: Not found: "shutt": no queue of that name exists; queues that take work from namespace "a-ns": team-a, default, ml`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, AcceptsWork(path, tt.queue, tt.namespace, false, view), tt.want)
		})
	}
	none := newView(util.MakeQueue("team-a").Namespaces(map[string]string{"team": "a"}).Obj())
	wantErrors(t, AcceptsWork(path, "x", "c-ns", false, none), `no queue takes work from namespace "c-ns"`)
}

func TestClosestName(t *testing.T) {
	names := []string{"default", "team-a", "team-b"}
	for query, want := range map[string]string{"team-aa": "team-a", "teama": "team-a", "default1": "default", "tm": "", "xyz": "", "team-c": "team-a"} {
		if got := closestName(query, names); got != want {
			t.Errorf("closestName(%q) = %q, want %q", query, got, want)
		}
	}
}
