package kubectlqueue

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/resource"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// info is a manifest as the builder reads it from a file.
func info(t *testing.T, manifest string) *resource.Info {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return &resource.Info{Source: "change.yaml", Object: u}
}

// A Job runs its parallelism's pods, at most its completions, bounded by its deadline, in the queue
// of its pods' label; a Queue changes the fields its manifest sets, and no others, with a warning for
// those a what-if does not play.
func TestWhatIfReadsJobsAndQueues(t *testing.T) {
	spec := &visibilityv1beta1.WhatIfSpec{}
	var warnings []string
	for _, m := range []string{`
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 4
  completions: 3
  activeDeadlineSeconds: 600
  template:
    metadata: {labels: {scheduling.queue-scheduler.io/queue: team-a}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
`, `
apiVersion: scheduling.queue-scheduler.io/v1beta1
kind: Queue
metadata: {name: team-a}
spec: {weight: 3, parent: root}
`} {
		if err := addToWhatIf(spec, info(t, m), "ns", func(msg string) { warnings = append(warnings, msg) }); err != nil {
			t.Fatal(err)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "spec.parent left as the queue has them") {
		t.Errorf("warnings %q; want one that spec.parent is left out", warnings)
	}
	if len(spec.Workloads) != 1 || len(spec.Queues) != 1 {
		t.Fatalf("spec %+v; want one workload and one queue change", spec)
	}
	w := spec.Workloads[0]
	if w.Name != "train" || w.Kind != "Job" || w.Pods != 3 || w.Template.Labels[schedulingv1beta1.QueueLabel] != "team-a" || w.Template.Spec.ActiveDeadlineSeconds == nil ||
		*w.Template.Spec.ActiveDeadlineSeconds != 600 {
		t.Errorf("the Job as %+v; want 3 pods of queue team-a (their label) bounded by 600 s", w)
	}
	q := spec.Queues[0]
	if q.Name != "team-a" || q.Weight == nil || *q.Weight != 3 || q.Capability != nil || q.Guarantee != nil || q.Reclaimable != nil || q.State != "" {
		t.Errorf("the Queue as %+v; want its weight 3 alone", q)
	}
}

// An object of another namespace, or of a kind a what-if does not read, is refused, named.
func TestWhatIfRefusesWhatItCannotAsk(t *testing.T) {
	for manifest, want := range map[string]string{
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: other}\n":          `Pod "p" is in namespace "other"`,
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n":                "not Deployment.apps",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallel: 2}\n": "unknown field",
	} {
		err := addToWhatIf(&visibilityv1beta1.WhatIfSpec{}, info(t, manifest), "ns", func(string) {})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an error saying %q", manifest, err, want)
		}
	}
}
