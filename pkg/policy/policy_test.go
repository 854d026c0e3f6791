package policy

import (
	"math"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// cpu is a list of cpu alone; "" is nothing.
func cpu(q string) v1.ResourceList {
	if q == "" {
		return nil
	}
	return v1.ResourceList{v1.ResourceCPU: resource.MustParse(q)}
}

func list(cpu, mem string) v1.ResourceList {
	l := v1.ResourceList{}
	if cpu != "" {
		l[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return l
}

// leaf is a queue under the root that holds allocated and deserves deserved, in cpu.
func leaf(name, allocated, deserved string) *Queue {
	return &Queue{Name: name, Parent: "root", Reclaimable: true, Allocated: cpu(allocated), Subtree: cpu(allocated),
		Deserved: cpu(deserved)}
}

// snapshotOf is a snapshot of 10 cpu holding the queues, the
// root's totals summed from them.
func snapshotOf(queues ...*Queue) *Snapshot {
	s := &Snapshot{Changes: 7, Capacity: cpu("10"), SharedCapacity: cpu("10"),
		Allocated: v1.ResourceList{}, Pending: v1.ResourceList{}, Queues: map[string]*Queue{}}
	root := &Queue{Name: "root", Deserved: cpu("10")}
	for _, q := range queues {
		s.Queues[q.Name] = q
		if q.Parent == "root" {
			s.Allocated = quota.Add(s.Allocated, q.Allocated)
			s.Pending = quota.Add(s.Pending, q.Pending)
		}
	}
	root.Allocated, root.Subtree = s.Allocated, s.Allocated
	s.Queues["root"] = root
	return s
}

// contended is the snapshot of TestAdmit in pkg/accounting: on 10 cpu, a holds 6 and asks 5 more, b
// holds 1 and asks 4 more, child holds 3 of its capped parent's 4 and asks 1 more; each leaf
// deserves 3.33, and the queues below their share can claim all of the idle room.
func contended() *Snapshot {
	a, b := leaf("a", "6", "3334m"), leaf("b", "1", "3333m")
	a.Pending, b.Pending = cpu("5"), cpu("4")
	parent := &Queue{Name: "capped-parent", Parent: "root", Capability: cpu("4"), Subtree: cpu("3"), Deserved: cpu("3333m")}
	child := &Queue{Name: "child", Parent: "capped-parent", Allocated: cpu("3"), Subtree: cpu("3"), Pending: cpu("1"),
		Deserved: cpu("3333m")}
	stopped := &Queue{Name: "stopped", Parent: "root", Suspended: true, Deserved: cpu("1")}
	s := snapshotOf(a, b, parent, child, stopped)
	s.Allocated, s.Pending = cpu("10"), cpu("10")
	s.Claimable = cpu("2333m") // b: 3.333 - 1; child: 3.333 - 3
	return s
}

func TestAdmit(t *testing.T) {
	for _, tt := range []struct {
		name, queue, cpu string
		work             Work
		want             string
		atCap            bool
		exceeds          bool
	}{
		{name: "below its share", queue: "b", cpu: "1"},
		{name: "more than an ancestor's capability on its own", queue: "child", cpu: "5", atCap: true, exceeds: true,
			want: `the request exceeds the capability of queue "capped-parent": cpu 5 requested > 4; it cannot run until the capability is raised`},
		{name: "exactly an ancestor's capability, at its capability", queue: "child", cpu: "4", atCap: true,
			want: `queue "capped-parent" would exceed its capability of cpu: 3 allocated + 4 requested > 4`},
		{name: "at its share with nothing idle to borrow", queue: "a", cpu: "1", want: `queue "a" is at its deserved share of cpu (6 allocated, 3334m deserved, 1 requested) and no idle cpu is left to borrow`},
		{name: "ancestor's capability", queue: "child", cpu: "2", atCap: true,
			want: `queue "capped-parent" would exceed its capability of cpu: 3 allocated + 2 requested > 4`},
		{name: "within every capability", queue: "child", cpu: "1"},
		{name: "capability with admitted work held back", queue: "child", cpu: "1", work: Work{HeldBack: cpu("1")}, atCap: true,
			want: `queue "capped-parent" would exceed its capability of cpu: 3 allocated + 1 reserved by admitted work + 1 requested > 4`},
		{name: "a queue the snapshot does not know", queue: "nowhere", cpu: "100"},
		{name: "a suspended queue, however much room", queue: "stopped", cpu: "1",
			want: `queue "stopped" is Suspended: no new resources are allocated`},
		{name: "a unit whole within its share", queue: "b", cpu: "2", work: Work{Whole: true}},
		{name: "a unit whole beyond its share with 1 reserved", queue: "b", cpu: "2", work: Work{Whole: true, Reserved: cpu("1")},
			want: `queue "b" is at its deserved share of cpu`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := contended()
			r := Admit(s, tt.queue, cpu(tt.cpu), tt.work)
			got := ""
			if r != nil {
				got = r.Message
			}
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("Admit = %q, want %q", got, tt.want)
			}
			if r != nil && (r.AtCapability != tt.atCap || r.ExceedsCapability != tt.exceeds) {
				t.Errorf("at capability %t, exceeds it %t; want %t, %t", r.AtCapability, r.ExceedsCapability, tt.atCap, tt.exceeds)
			}
		})
	}
}

// A queue at its share borrows what is idle and claimed by no queue below its share; once others
// can claim it, it may not.
func TestAdmitBorrowsIdleCapacity(t *testing.T) {
	s := snapshotOf(leaf("a", "4", "4"), leaf("b", "", "4"))
	s.Allocated = cpu("4")
	if r := Admit(s, "a", cpu("6"), Work{}); r != nil {
		t.Errorf("6 of 6 idle cpu, nobody claiming: %q", r.Message)
	}
	s.Claimable = cpu("4")
	if r := Admit(s, "a", cpu("3"), Work{}); r == nil {
		t.Error("3 cpu when b can claim 4 of the 6 idle: want refused")
	}
	if r := Admit(s, "a", cpu("2"), Work{}); r != nil {
		t.Errorf("2 cpu beside b's claim of 4: %q", r.Message)
	}
}

// Room claimed for gangs whose reservations start later may be borrowed: the reservations keep it on
// the nodes for them.
func TestAdmitBorrowsClaimsOfLaterReservations(t *testing.T) {
	s := snapshotOf(leaf("a", "4", "4"), leaf("b", "", "4"))
	s.Allocated, s.Claimable = cpu("4"), cpu("4")
	if r := Admit(s, "a", cpu("3"), Work{}); r == nil {
		t.Fatal("3 cpu when b can claim 4 of the 6 idle: want refused")
	}
	if r := Admit(s, "a", cpu("3"), Work{Backfill: cpu("4")}); r != nil {
		t.Errorf("3 cpu when b's claim of 4 is for a reservation that starts later: %q", r.Message)
	}
	if r := Admit(s, "a", cpu("5"), Work{Backfill: cpu("2")}); r == nil {
		t.Error("5 cpu when 2 of b's claim of 4 may be borrowed: want refused")
	}
}

// TestHeadroom: what a refused pod's queue must free. Above its share, more than its excess; at an
// ancestor's capability, at least what the request would exceed it by; with idle room to borrow,
// nothing for the share.
func TestHeadroom(t *testing.T) {
	s := contended()
	for _, tt := range []struct {
		name, queue, req, freed string
		want                    bool
	}{
		// a holds 6 cpu and deserves 3.334: 2.666 over.
		{"nothing freed", "a", "1", "0", false},
		{"freed its excess exactly", "a", "1", "2666m", false},
		{"freed more than its excess", "a", "1", "2667m", true},
		// child holds 3 of its parent's 4: a request of 2 needs 1 freed.
		{"capability: too little freed", "child", "2", "999m", false},
		{"capability: enough freed", "child", "2", "1", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := HeadroomOf(s, tt.queue, nil, cpu(tt.req), nil)
			if got := h.Fits(AmountsOf(cpu(tt.freed))); got != tt.want {
				t.Errorf("Fits(%s freed) = %t, want %t (headroom %+v)", tt.freed, got, tt.want, h)
			}
		})
	}
	reserved := HeadroomOf(s, "child", cpu("1"), cpu("1"), nil)
	if reserved.Fits(AmountsOf(cpu("999m"))) || !reserved.Fits(AmountsOf(cpu("1"))) {
		t.Errorf("child with 1 cpu reserved, asking 1: %+v, want 1 cpu to free", reserved)
	}
	idle := snapshotOf(leaf("a", "4", "4"))
	if h := HeadroomOf(idle, "a", nil, cpu("1"), nil); !h.Fits(Amounts{}) {
		t.Errorf("a pod that borrows idle room must free nothing for the share: %+v", h)
	}
	shareless := snapshotOf(leaf("a", "", "4"))
	if h := HeadroomOf(shareless, "a", nil, list("1", "1Gi"), nil); h.Fits(AmountsOf(list("100", "100Gi"))) {
		t.Error("a queue that deserves no memory passes a memory request once it frees some")
	}
}

// Amounts near int64's limits saturate instead of overflowing: a capability of 8E cpu or 10Pi of
// memory is very large, not nothing, and a queue under it needs nothing freed.
func TestAmountsNearInt64Limits(t *testing.T) {
	huge := AmountsOf(list("8E", "10Pi"))
	if huge[v1.ResourceCPU] != amountLimit || huge[v1.ResourceMemory] != 10<<50 {
		t.Errorf("8E cpu, 10Pi memory as amounts: %v; want cpu saturated at %d and 10Pi in bytes", huge, int64(amountLimit))
	}
	huge.Add(cpu("8E"), 1)
	if huge[v1.ResourceCPU] != amountLimit {
		t.Errorf("adding to a saturated amount overflowed: %d", huge[v1.ResourceCPU])
	}
	big := leaf("big", "3", "5")
	big.Capability = list("8E", "10Pi")
	h := HeadroomOf(snapshotOf(big), "big", nil, list("1", "1Gi"), nil)
	if len(h.capability) != 2 || h.capability[v1.ResourceCPU] > 0 || h.capability[v1.ResourceMemory] > 0 {
		t.Errorf("under capabilities of 8E cpu and 10Pi memory, the capability headroom asks to free %v", h.capability)
	}
}

// Reclaim may take back for a queue only while it stays within its share, and only from
// reclaimable queues above theirs, never from the queue itself.
func TestReclaimEligibility(t *testing.T) {
	s := contended()
	s.Spare = map[string]v1.ResourceList{"a": cpu("2666m")}
	for _, tt := range []struct {
		queue, cpu string
		want       bool
	}{
		{"b", "2", true},  // 1 + 2 ≤ 3.333
		{"b", "3", false}, // 1 + 3 > 3.333
		{"a", "1", false}, // above its share already
		{"nowhere", "1", false},
	} {
		if got := UnderShare(s, tt.queue, cpu(tt.cpu)); got != tt.want {
			t.Errorf("UnderShare(%s, %s) = %t, want %t", tt.queue, tt.cpu, got, tt.want)
		}
	}
	if spare := ReclaimableSpare(s, "b"); len(spare) != 1 || !quota.Equals(spare["a"], cpu("2666m")) {
		t.Errorf("spare offered to b: %v, want a's 2666m", spare)
	}
	if _, ok := ReclaimableSpare(s, "a")["a"]; ok {
		t.Error("a queue's own spare is offered to it")
	}
}

// TestAboveShare: what a queue holds above its share, not counting what leaves, per resource; nil
// when nothing is above; the inputs are left as they were.
func TestAboveShare(t *testing.T) {
	cases := []struct {
		name                    string
		held, leaving, deserved v1.ResourceList
		want                    v1.ResourceList
	}{
		{"below", list("2", "1Gi"), nil, list("4", "2Gi"), nil},
		{"at", list("4", ""), nil, list("4", ""), nil},
		{"above in one resource", list("6", "1Gi"), nil, list("4", "2Gi"), list("2", "")},
		{"above, but leaving", list("6", ""), list("2", ""), list("4", ""), nil},
		{"leaving more than above", list("6", ""), list("1", ""), list("4", ""), list("1", "")},
		{"deserving none of a resource", list("1", "1Gi"), nil, list("4", ""), list("", "1Gi")},
		{"holding nothing", nil, nil, list("4", ""), nil},
	}
	for _, c := range cases {
		held := c.held.DeepCopy()
		got := AboveShare(c.held, c.leaving, c.deserved)
		if !quota.Equals(got, c.want) || (c.want == nil) != (got == nil) {
			t.Errorf("%s: above share %v, want %v", c.name, got, c.want)
		}
		if !quota.Equals(c.held, held) {
			t.Errorf("%s: held changed to %v", c.name, c.held)
		}
	}
}

// Claimable room: per leaf, what it deserves up to its demand, less what it holds; a queue at or
// above its share claims nothing.
func TestClaimable(t *testing.T) {
	deserved := map[string]v1.ResourceList{"a": cpu("4"), "b": cpu("4"), "c": cpu("2")}
	demands := map[string]v1.ResourceList{"a": cpu("10"), "b": cpu("3"), "c": cpu("5")}
	allocated := map[string]v1.ResourceList{"a": cpu("1"), "b": cpu("1"), "c": cpu("3")}
	// a: min(4, 10) - 1 = 3; b: min(4, 3) - 1 = 2; c: above its share, 0.
	if got := Claimable(deserved, demands, allocated, []string{"a", "b", "c"}); !quota.Equals(got, cpu("5")) {
		t.Errorf("claimable: %v, want 5 cpu", got)
	}
	if got := Claimable(deserved, demands, allocated, nil); len(got) != 0 {
		t.Errorf("claimable of no leaves: %v", got)
	}
}

func TestDominantShare(t *testing.T) {
	for _, tt := range []struct {
		name                string
		allocated, deserved v1.ResourceList
		want                float64
	}{
		{"holding nothing", nil, cpu("4"), 0},
		{"half", cpu("2"), cpu("4"), 0.5},
		{"the larger of two", list("1", "3Gi"), list("4", "4Gi"), 0.75},
		{"borrowing", cpu("6"), cpu("4"), 1.5},
		{"holding what it does not deserve", cpu("1"), nil, math.Inf(1)},
	} {
		if got := DominantShare(tt.allocated, tt.deserved); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRememberedShare(t *testing.T) {
	capacity := list("10", "100Gi")
	for _, tt := range []struct {
		name   string
		used   map[v1.ResourceName]float64
		weight int32
		want   float64
	}{
		{"nothing used", nil, 1, 0},
		{"the resource used the most of the cluster's", map[v1.ResourceName]float64{v1.ResourceCPU: 100, v1.ResourceMemory: 50 << 30}, 1, 10},
		{"over the weight", map[v1.ResourceName]float64{v1.ResourceCPU: 100}, 4, 2.5},
		{"a resource the cluster has none of", map[v1.ResourceName]float64{"nvidia.com/gpu": 100}, 1, 0},
		{"weight 0 counts as 1", map[v1.ResourceName]float64{v1.ResourceCPU: 10}, 0, 1},
	} {
		if got := RememberedShare(tt.used, capacity, tt.weight); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A walk up the tree visits each known ancestor once and stops at a cycle.
func TestAncestry(t *testing.T) {
	s := snapshotOf(&Queue{Name: "x", Parent: "y"}, &Queue{Name: "y", Parent: "x"}, &Queue{Name: "c", Parent: "p"},
		&Queue{Name: "p", Parent: "root"})
	var cycle, chain []string
	s.Ancestry("x", func(q *Queue) { cycle = append(cycle, q.Name) })
	s.Ancestry("c", func(q *Queue) { chain = append(chain, q.Name) })
	if strings.Join(cycle, ",") != "x,y" || strings.Join(chain, ",") != "c,p,root" {
		t.Errorf("walks: %v and %v, want x,y and c,p,root", cycle, chain)
	}
}

// A plan for a queue's pod reads no share while no other reclaimable queue holds anything; the
// root, whose totals are in Subtree, is not reclaimable.
func TestNothingToReclaimBeside(t *testing.T) {
	closed := leaf("closed", "4", "1")
	closed.Reclaimable = false
	tests := []struct {
		name   string
		queues []*Queue
		want   bool
	}{
		{"only the pod's queue holds anything", []*Queue{leaf("mine", "6", "5"), leaf("idle", "0", "5")}, true},
		{"another queue holds pods, not reclaimable", []*Queue{leaf("mine", "6", "5"), closed}, true},
		{"another reclaimable queue holds pods, even within its share", []*Queue{leaf("mine", "2", "5"), leaf("other", "1", "5")}, false},
	}
	for _, tt := range tests {
		s := snapshotOf(tt.queues...)
		if got := NothingToReclaimBeside(s, "mine"); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The part of a queue's claim its reservations keep is at most what the queue can still claim: a
// reservation larger than the queue's claim frees no other queue's claim, and a queue above its
// share claims nothing.
func TestReservedClaims(t *testing.T) {
	below, partly, above := leaf("below", "", "4"), leaf("partly", "3", "4"), leaf("above", "5", "4")
	below.Pending, partly.Pending, above.Pending = cpu("16"), cpu("8"), cpu("8")
	few := leaf("few", "", "4")
	few.Pending = cpu("2")
	s := snapshotOf(below, partly, above, few)
	got := ReservedClaims(s, map[string]v1.ResourceList{"below": cpu("16"), "partly": cpu("8"), "above": cpu("8"), "few": cpu("8"), "gone": cpu("8")})
	// below: its share, 4; partly: 4 - 3; above: nothing; few: its demand, 2; gone: no such queue.
	if want := cpu("7"); !quota.Equals(got, want) {
		t.Errorf("reserved claims %v, want %v", got, want)
	}
	if got := ReservedClaims(s, map[string]v1.ResourceList{"below": cpu("1")}); !quota.Equals(got, cpu("1")) {
		t.Errorf("a reservation smaller than the claim: %v, want 1 cpu", got)
	}
}

// A request above a capability is named from the queue up, each resource in name order, and only
// when the request alone exceeds it: what the queue holds does not count.
func TestNeverFits(t *testing.T) {
	for _, tt := range []struct {
		name       string
		capability v1.ResourceList
		req        v1.ResourceList
		want       string
	}{
		{name: "within", capability: cpu("32"), req: cpu("32")},
		{name: "above", capability: cpu("32"), req: cpu("40"),
			want: `the request exceeds the capability of queue "q": cpu 40 requested > 32; it cannot run until the capability is raised`},
		{name: "a resource without a capability is unlimited", capability: cpu("32"), req: v1.ResourceList{"nvidia.com/gpu": resource.MustParse("9")}},
		{name: "the first resource by name", capability: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")},
			req:  v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("2Gi")},
			want: `cpu 2 requested > 1`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := NeverFits("q", tt.capability, tt.req)
			got := ""
			if r != nil {
				got = r.Message
				if !r.ExceedsCapability || !r.AtCapability {
					t.Errorf("refusal %+v does not say the request exceeds the capability", r)
				}
			}
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("NeverFits = %q, want %q", got, tt.want)
			}
		})
	}
}
