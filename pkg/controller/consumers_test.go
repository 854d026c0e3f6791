package controller

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestFinished(t *testing.T) {
	withConditions := func(conditions ...map[string]any) *unstructured.Unstructured {
		list := make([]any, 0, len(conditions))
		for _, c := range conditions {
			list = append(list, c)
		}
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": list}}}
	}
	for _, tt := range []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"no status", &unstructured.Unstructured{Object: map[string]any{}}, false},
		{"Job complete", withConditions(map[string]any{"type": "SuccessCriteriaMet", "status": "True"}, map[string]any{"type": "Complete", "status": "True"}), true},
		{"Job failed", withConditions(map[string]any{"type": "Failed", "status": "True"}), true},
		{"Kubeflow succeeded", withConditions(map[string]any{"type": "Running", "status": "False"}, map[string]any{"type": "Succeeded", "status": "True"}), true},
		{"JobSet completed", withConditions(map[string]any{"type": "Completed", "status": "True"}), true},
		{"condition not true", withConditions(map[string]any{"type": "Complete", "status": "False"}), false},
		{"only interim conditions", withConditions(map[string]any{"type": "Suspended", "status": "True"}, map[string]any{"type": "FailureTarget", "status": "True"}), false},
		{"conditions not a list", &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": "Complete"}}}, false},
	} {
		if got := finished(tt.obj); got != tt.want {
			t.Errorf("%s: finished = %t, want %t", tt.name, got, tt.want)
		}
	}
}

func TestSuspendField(t *testing.T) {
	for _, tt := range []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"batch Job suspended", map[string]any{"suspend": true}, []string{"spec", "suspend"}},
		{"batch Job running", map[string]any{"suspend": false}, nil},
		{"Kubeflow job suspended", map[string]any{"runPolicy": map[string]any{"suspend": true}}, []string{"spec", "runPolicy", "suspend"}},
		{"no switch", map[string]any{"replicas": int64(2)}, nil},
		{"switch of the wrong type", map[string]any{"suspend": "yes"}, nil},
	} {
		got := suspendField(&unstructured.Unstructured{Object: map[string]any{"spec": tt.spec}})
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: suspendField = %v, want %v", tt.name, got, tt.want)
		}
	}
}
