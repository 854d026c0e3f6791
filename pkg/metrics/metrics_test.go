package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
)

// names lists the names of every metric of the package, from their descriptions.
func names(t *testing.T) []string {
	t.Helper()
	descs := make(chan *prometheus.Desc, 100)
	for _, c := range counted {
		c.Describe(descs)
	}
	queues.Describe(descs)
	close(descs)
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	var out []string
	for d := range descs {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		out = append(out, m[1])
	}
	return out
}

// docs/metrics.md lists every metric, and there are at least 25.
func TestEveryMetricIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	all := names(t)
	if len(all) < 25 {
		t.Errorf("%d metrics, want at least 25: %v", len(all), all)
	}
	for _, name := range all {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/metrics.md does not list %s", name)
		}
	}
}

// The per-queue gauges report a queue's snapshot: quantities in base units, the share as
// allocated ÷ deserved (none without a deserved share), one state series per state, and zeros for
// phases without objects.
func TestQueueGauges(t *testing.T) {
	c := &queueCollector{}
	defer c.add(func() []QueueSnapshot {
		return []QueueSnapshot{{
			Name: "team-a", State: "Suspended", Weight: 3,
			Allocated:  v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m"), v1.ResourceMemory: resource.MustParse("1Gi")},
			Deserved:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")},
			Capability: v1.ResourceList{v1.ResourceCPU: resource.MustParse("8E")},
			PodGroups:  map[string]int{"Running": 2},
		}}
	})()
	expected := `
# HELP queue_scheduler_queue_allocated [ALPHA] Resources requested by the queue's bound pods, by resource (cpu in cores, memory in bytes).
# TYPE queue_scheduler_queue_allocated gauge
queue_scheduler_queue_allocated{queue="team-a",resource="cpu"} 1.5
queue_scheduler_queue_allocated{queue="team-a",resource="memory"} 1.073741824e+09
# HELP queue_scheduler_queue_capability [ALPHA] The queue's capability (hard maximum), by resource; absent when unlimited.
# TYPE queue_scheduler_queue_capability gauge
queue_scheduler_queue_capability{queue="team-a",resource="cpu"} 8e+18
# HELP queue_scheduler_queue_share [ALPHA] Allocated divided by deserved, by resource; absent when nothing is deserved.
# TYPE queue_scheduler_queue_share gauge
queue_scheduler_queue_share{queue="team-a",resource="cpu"} 0.5
# HELP queue_scheduler_queue_state [ALPHA] 1 for the queue's current state, 0 for the others.
# TYPE queue_scheduler_queue_state gauge
queue_scheduler_queue_state{queue="team-a",state="Closed"} 0
queue_scheduler_queue_state{queue="team-a",state="Closing"} 0
queue_scheduler_queue_state{queue="team-a",state="Open"} 0
queue_scheduler_queue_state{queue="team-a",state="Suspended"} 1
queue_scheduler_queue_state{queue="team-a",state="Unknown"} 0
# HELP queue_scheduler_queue_podgroups [ALPHA] The queue's PodGroups, by phase.
# TYPE queue_scheduler_queue_podgroups gauge
queue_scheduler_queue_podgroups{phase="Completed",queue="team-a"} 0
queue_scheduler_queue_podgroups{phase="Inqueue",queue="team-a"} 0
queue_scheduler_queue_podgroups{phase="Pending",queue="team-a"} 0
queue_scheduler_queue_podgroups{phase="Running",queue="team-a"} 2
queue_scheduler_queue_podgroups{phase="Unknown",queue="team-a"} 0
# HELP queue_scheduler_queue_weight [ALPHA] The queue's weight in the fair share.
# TYPE queue_scheduler_queue_weight gauge
queue_scheduler_queue_weight{queue="team-a"} 3
`
	if err := testutil.CustomCollectAndCompare(c, strings.NewReader(expected),
		"queue_scheduler_queue_allocated", "queue_scheduler_queue_capability", "queue_scheduler_queue_share",
		"queue_scheduler_queue_state", "queue_scheduler_queue_podgroups", "queue_scheduler_queue_weight"); err != nil {
		t.Error(err)
	}
}

// The latest live source is read; removing it, in any order, brings back the one before.
func TestLatestLiveSourceIsRead(t *testing.T) {
	c := &queueCollector{}
	named := func(name string) QueueSource {
		return func() []QueueSnapshot { return []QueueSnapshot{{Name: name}} }
	}
	read := func() string {
		if s := c.source(); s != nil {
			return s()[0].Name
		}
		return ""
	}
	removeFirst := c.add(named("first"))
	removeSecond := c.add(named("second"))
	if got := read(); got != "second" {
		t.Errorf("read %q, want the latest source", got)
	}
	removeSecond()
	if got := read(); got != "first" {
		t.Errorf("read %q after the latest was removed, want the one before", got)
	}
	removeThird := c.add(named("third"))
	removeFirst()
	if got := read(); got != "third" {
		t.Errorf("read %q after an older source was removed, want the latest", got)
	}
	removeThird()
	if got := read(); got != "" {
		t.Errorf("read %q with no source left", got)
	}
}

// The shipped Grafana dashboard is valid JSON and names only metrics that exist; together its
// panels show every metric.
func TestDashboardNamesOnlyExistingMetrics(t *testing.T) {
	raw, err := os.ReadFile("../../manifests/grafana/queue-scheduler-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dashboard); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, name := range names(t) {
		known[name] = false
	}
	series := regexp.MustCompile(`queue_scheduler_\w+`)
	for _, p := range dashboard.Panels {
		for _, target := range p.Targets {
			for _, s := range series.FindAllString(target.Expr, -1) {
				name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(s, "_bucket"), "_count"), "_sum")
				if _, ok := known[name]; !ok {
					t.Errorf("panel %q: no metric %s", p.Title, s)
				}
				known[name] = true
			}
		}
	}
	for name, shown := range known {
		if !shown {
			t.Errorf("no panel shows %s", name)
		}
	}
}

func TestUsageGauges(t *testing.T) {
	c := &queueCollector{}
	defer c.add(func() []QueueSnapshot {
		return []QueueSnapshot{
			{Name: "heavy", Usage: map[v1.ResourceName]float64{v1.ResourceCPU: 7200}, EffectiveWeights: map[v1.ResourceName]float64{v1.ResourceCPU: 0.5}},
			{Name: "idle"},
		}
	})()
	expected := `
# HELP queue_scheduler_queue_effective_weight [ALPHA] The weight the queue's usage gives it among its siblings for what is left above the guarantees, by resource; absent where it is the queue's own weight.
# TYPE queue_scheduler_queue_effective_weight gauge
queue_scheduler_queue_effective_weight{queue="heavy",resource="cpu"} 0.5
# HELP queue_scheduler_queue_usage_resource_seconds [ALPHA] The queue's decayed usage with the queues below it, by resource: resource-seconds held, each counting half after the usage half-life; absent without a usage history.
# TYPE queue_scheduler_queue_usage_resource_seconds gauge
queue_scheduler_queue_usage_resource_seconds{queue="heavy",resource="cpu"} 7200
`
	if err := testutil.CustomCollectAndCompare(c, strings.NewReader(expected),
		"queue_scheduler_queue_effective_weight", "queue_scheduler_queue_usage_resource_seconds"); err != nil {
		t.Error(err)
	}
}

// A plan's report: how many reservations, and the room they hold by resource, cpu in cores; a plan
// that holds less drops the resources it no longer holds.
func TestSetReservations(t *testing.T) {
	SetReservations(2, map[v1.ResourceName]int64{v1.ResourceCPU: 16000, v1.ResourceMemory: 1 << 30})
	expected := `
# HELP queue_scheduler_reservations [ALPHA] Waiting gangs that hold a reservation (the Backfill plugin's last plan).
# TYPE queue_scheduler_reservations gauge
queue_scheduler_reservations 2
# HELP queue_scheduler_reserved_resources [ALPHA] Room held by the reservations of waiting gangs, by resource (cpu in cores, memory in bytes).
# TYPE queue_scheduler_reserved_resources gauge
queue_scheduler_reserved_resources{resource="cpu"} 16
queue_scheduler_reserved_resources{resource="memory"} 1.073741824e+09
`
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(expected),
		"queue_scheduler_reservations", "queue_scheduler_reserved_resources"); err != nil {
		t.Error(err)
	}
	SetReservations(0, map[v1.ResourceName]int64{})
	expected = `
# HELP queue_scheduler_reservations [ALPHA] Waiting gangs that hold a reservation (the Backfill plugin's last plan).
# TYPE queue_scheduler_reservations gauge
queue_scheduler_reservations 0
`
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(expected),
		"queue_scheduler_reservations", "queue_scheduler_reserved_resources"); err != nil {
		t.Error(err)
	}
}
