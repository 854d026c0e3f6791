package accounting

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// On 10 CPUs with equal weights and demand beyond the cluster, a, b and c deserve 3.33 each: a holds
// 6 (reclaimable), b holds 1 and asks 4 more, c holds 3 (not reclaimable) and asks 2 more. The
// first terminating of a's pods are being deleted.
func newReclaimAccounting(t *testing.T, terminating int) *Accounting {
	queues := []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj(),
		util.MakeQueue("c").Reclaimable(false).Obj()}
	kube := []runtime.Object{util.MakeNode("n", "10", "10Gi"), pod("a", "a-pending", "5", ""),
		pod("b", "b-bound", "1", "n"), pod("b", "b-pending", "4", ""), pod("c", "c-pending", "2", "")}
	for i := range 6 {
		p := pod("a", fmt.Sprint("a-", i), "1", "n")
		if i < terminating {
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		kube = append(kube, p)
	}
	for i := range 3 {
		kube = append(kube, pod("c", fmt.Sprint("c-", i), "1", "n"))
	}
	return newTestAccounting(t, queues, kube...)
}

func TestUnderShare(t *testing.T) {
	a := newReclaimAccounting(t, 0)
	for _, tt := range []struct {
		queue, cpu string
		want       bool
	}{
		{"b", "2", true},  // 1 + 2 ≤ 3.33
		{"b", "3", false}, // 1 + 3 > 3.33
		{"a", "1", false}, // above its share already
	} {
		if got := a.UnderShare(tt.queue, cpu(tt.cpu)); got != tt.want {
			t.Errorf("UnderShare(%s, %s) = %t, want %t", tt.queue, tt.cpu, got, tt.want)
		}
	}
}

func TestReclaimableSpare(t *testing.T) {
	a := newReclaimAccounting(t, 0)
	spare := a.ReclaimableSpare("b")
	if len(spare) != 1 {
		t.Fatalf("spare from %d queues, want only a (c is not reclaimable, b asks): %v", len(spare), spare)
	}
	got := spare["a"][v1.ResourceCPU]
	if want := "2667m"; got.String() != want {
		t.Errorf("a's spare: got %s, want %s (6 held - 3.33 deserved)", got.String(), want)
	}
	if _, ok := a.ReclaimableSpare("a")["a"]; ok {
		t.Error("a queue's own spare is offered to it")
	}
}

// What terminating pods hold is on its way back: it is not spare any more.
func TestReclaimableSpareLeavesOutTerminatingPods(t *testing.T) {
	a := newReclaimAccounting(t, 2)
	got := a.ReclaimableSpare("b")["a"][v1.ResourceCPU]
	if want := "667m"; got.String() != want {
		t.Errorf("a's spare: got %s, want %s (6 held - 2 terminating - 3.33 deserved)", got.String(), want)
	}
	if _, ok := newReclaimAccounting(t, 3).ReclaimableSpare("b")["a"]; ok {
		t.Error("a's 3 staying pods are within its share of 3.33: want no spare")
	}
}

func TestAdmitUnit(t *testing.T) {
	a := newReclaimAccounting(t, 0)
	if r := a.AdmitUnit("b", cpu("2"), nil, nil); r != nil {
		t.Errorf("a unit within the share: %q", r.Message)
	}
	if r := a.AdmitUnit("b", cpu("2"), cpu("1"), nil); r == nil || !strings.Contains(r.Message, `queue "b" is at its deserved share of cpu`) {
		t.Errorf("a unit beyond the share with 1 reserved: got %+v", r)
	}
}

// TestHeadroom checks what a refused pod's queue must free: above its share, more than its excess;
// at an ancestor's capability, at least what the request would exceed it by.
func TestHeadroom(t *testing.T) {
	overShare := newReclaimAccounting(t, 0)
	if r := overShare.Admit("a", "", cpu("1")); r == nil {
		t.Fatal("a is above its share: want refused")
	}
	capped := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(),
		util.MakeQueue("parent").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj(),
		util.MakeQueue("child").Parent("parent").Obj()},
		util.MakeNode("n", "10", "10Gi"), pod("child", "held", "3", "n"))
	tests := []struct {
		name  string
		acct  *Accounting
		queue string
		freed string
		want  bool
	}{
		// a holds 6 CPUs and deserves 3.333: 2.667 over.
		{"nothing freed", overShare, "a", "0", false},
		{"freed its excess exactly", overShare, "a", "2667m", false},
		{"freed more than its excess", overShare, "a", "2668m", true},
		// child holds 3 of its parent's 4: a request of 2 needs 1 freed.
		{"capability: too little freed", capped, "child", "999m", false},
		{"capability: enough freed", capped, "child", "1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := cpu("1")
			if tt.queue == "child" {
				req = cpu("2")
			}
			h := tt.acct.HeadroomOf(tt.acct.Snapshot(), tt.queue, "", req)
			if got := h.Fits(policy.AmountsOf(cpu(tt.freed))); got != tt.want {
				t.Errorf("Fits(%s freed) = %t, want %t (headroom %+v)", tt.freed, got, tt.want, h)
			}
		})
	}
}

func TestHasBoundBelow(t *testing.T) {
	low := pod("a", "low", "1", "n")
	low.Spec.Priority = new(int32)
	*low.Spec.Priority = 5
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj()}, util.MakeNode("n", "10", "10Gi"), low)
	if !a.Pods.HasBoundBelow("a", 6) || a.Pods.HasBoundBelow("a", 5) || a.Pods.HasBoundBelow("b", 100) {
		t.Error("HasBoundBelow: want true only above priority 5 in queue a")
	}
}

// TestSumOf: lists add up without their zeros; a lone list is returned as it is, unless it holds
// a zero; the inputs are left as they were.
func TestSumOf(t *testing.T) {
	one, two := cpu("1"), cpu("2")
	if got := sumOf(nil, one, v1.ResourceList{}); reflect.ValueOf(got).Pointer() != reflect.ValueOf(one).Pointer() {
		t.Errorf("a lone list copied: %v", got)
	}
	if got := sumOf(one, two, nil); !quota.Equals(got, cpu("3")) || !quota.Equals(one, cpu("1")) || !quota.Equals(two, cpu("2")) {
		t.Errorf("1 + 2 cpu: %v (inputs now %v, %v)", got, one, two)
	}
	zero := v1.ResourceList{v1.ResourceCPU: resource.MustParse("0"), v1.ResourceMemory: resource.MustParse("1Gi")}
	if got := sumOf(zero); len(got) != 1 || len(zero) != 2 {
		t.Errorf("a lone list with a zero: %v, want only its memory (input now %v)", got, zero)
	}
	if got := sumOf(cpu("1"), cpu("-1")); len(got) != 0 {
		t.Errorf("1 - 1 cpu: %v, want nothing", got)
	}
	if got := sumOf(nil, nil); got != nil {
		t.Errorf("nothing: %v", got)
	}
}
