package v1beta1

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Both forms decode to one Resource list; each is encoded back as it was written, with the entries
// that were not taken kept as written and named with their rule.
func TestGuaranteeForms(t *testing.T) {
	base := field.NewPath("spec", "guarantee")
	for _, tt := range []struct {
		name, in     string
		wantCPU      string // "" when no cpu is guaranteed
		wantFlat     bool
		wantRejected []string // the errors' texts, in order
		wantPath     string   // the path of cpu's guarantee
	}{
		{name: "flat", in: `{"cpu":"8","memory":"16Gi"}`, wantCPU: "8", wantFlat: true, wantPath: "spec.guarantee[cpu]"},
		{name: "flat integer", in: `{"cpu":8}`, wantCPU: "8", wantFlat: true, wantPath: "spec.guarantee[cpu]"},
		{name: "nested", in: `{"resource":{"cpu":"500m"}}`, wantCPU: "500m", wantPath: "spec.guarantee.resource[cpu]"},
		{name: "empty", in: `{}`, wantPath: "spec.guarantee.resource[cpu]"},
		{name: "null", in: `null`, wantPath: "spec.guarantee.resource[cpu]"},
		{name: "flat, not quantities", in: `{"cpu":"lots","memory":"-1Gi","gpu":{"a":1}}`, wantFlat: true,
			wantRejected: []string{
				`spec.guarantee[gpu]: Invalid value: "{\"a\":1}": must be a quantity of at least 0`,
				`spec.guarantee[memory]: Invalid value: "-1Gi": must be a quantity of at least 0`,
				`spec.guarantee[cpu]: Invalid value: "lots": must be a quantity of at least 0`,
			}, wantPath: "spec.guarantee[cpu]"},
		{name: "mixed", in: `{"resource":{"cpu":"2"},"memory":"1Gi"}`, wantCPU: "2",
			wantRejected: []string{`spec.guarantee[memory]: Invalid value: "1Gi": write the guarantee in one form`},
			wantPath:     "spec.guarantee.resource[cpu]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var g Guarantee
			if err := json.Unmarshal([]byte(tt.in), &g); err != nil {
				t.Fatalf("decode %s: %v", tt.in, err)
			}
			if cpu, ok := g.Resource[corev1.ResourceCPU]; ok != (tt.wantCPU != "") || (ok && cpu.String() != tt.wantCPU) {
				t.Errorf("cpu: got %v (%t), want %q", cpu.String(), ok, tt.wantCPU)
			}
			if g.Form.Flat != tt.wantFlat {
				t.Errorf("flat: got %t, want %t", g.Form.Flat, tt.wantFlat)
			}
			if got := g.Path(base, corev1.ResourceCPU).String(); got != tt.wantPath {
				t.Errorf("path: got %s, want %s", got, tt.wantPath)
			}
			errs := g.RejectedEntries(base)
			if len(errs) != len(tt.wantRejected) {
				t.Fatalf("rejected: got %v, want %d errors", errs, len(tt.wantRejected))
			}
			for _, want := range tt.wantRejected {
				if !strings.Contains(errs.ToAggregate().Error(), want) {
					t.Errorf("rejected: %q does not contain %q", errs.ToAggregate().Error(), want)
				}
			}
			assertRoundTrip(t, tt.in, g)
		})
	}
}

// assertRoundTrip checks that g, decoded from in (and deep-copied), encodes to what in says.
func assertRoundTrip(t *testing.T, in string, g Guarantee) {
	t.Helper()
	out, err := json.Marshal(g.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if want == nil {
		want = map[string]any{}
	}
	// Quantities are written in their canonical form: 8 reads back as "8".
	if w, ok := want.(map[string]any); ok && w["cpu"] == float64(8) {
		w["cpu"] = "8"
	}
	if wj, gj := mustJSON(t, want), mustJSON(t, got); wj != gj {
		t.Errorf("encoded %s, want %s", gj, wj)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A guarantee built in code is written nested; one decoded flat and changed stays flat.
func TestGuaranteeEncodedForm(t *testing.T) {
	built := Guarantee{Resource: corev1.ResourceList{corev1.ResourceCPU: mustQuantity("4")}}
	if got := mustJSON(t, built); got != `{"resource":{"cpu":"4"}}` {
		t.Errorf("built in code: got %s", got)
	}
	var flat Guarantee
	if err := json.Unmarshal([]byte(`{"cpu":"8"}`), &flat); err != nil {
		t.Fatal(err)
	}
	flat.Resource[corev1.ResourceMemory] = mustQuantity("1Gi")
	if got := mustJSON(t, flat); got != `{"cpu":"8","memory":"1Gi"}` {
		t.Errorf("decoded flat, then changed: got %s", got)
	}
	q := Queue{Spec: QueueSpec{Guarantee: flat}}
	if got := mustJSON(t, q.Spec); !strings.Contains(got, `"guarantee":{"cpu":"8","memory":"1Gi"}`) {
		t.Errorf("in a QueueSpec: got %s", got)
	}
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// Queues are compared with apimachinery's semantic equality, which reads every field of a type: a
// guarantee's form is one it can read, and two forms of one guarantee differ.
func TestGuaranteeSemanticEquality(t *testing.T) {
	var flat, nested Guarantee
	if err := json.Unmarshal([]byte(`{"cpu":"8"}`), &flat); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"resource":{"cpu":"8"}}`), &nested); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(Queue{Spec: QueueSpec{Guarantee: flat}}, Queue{Spec: QueueSpec{Guarantee: *flat.DeepCopy()}}) {
		t.Error("a queue and its copy differ")
	}
	if equality.Semantic.DeepEqual(flat, nested) {
		t.Error("the flat and nested forms of one guarantee, which encode differently, compare equal")
	}
}
