// Package queuesim plays scenarios on the whole system — an embedded etcd and kube-apiserver, the
// queue-scheduler with its controller and webhook, and simulated nodes whose kubelet stand-in runs
// and finishes the pods — and reports what each queue got against what it deserved.
package queuesim

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Scenario is what a scenario file describes.
type Scenario struct {
	// Name names the scenario in the report.
	Name string `yaml:"name"`
	// Duration is how long the scenario plays, in simulated time.
	Duration Duration `yaml:"duration"`
	// TimeScale is how many simulated seconds pass in a real second (default 1).
	TimeScale float64 `yaml:"timeScale"`
	// Seed makes random arrivals repeatable.
	Seed uint64 `yaml:"seed"`
	// Sample is the simulated time between two samples of the queues (default 10s).
	Sample Duration `yaml:"sample"`
	// Nodes are the simulated nodes.
	Nodes []NodeGroup `yaml:"nodes"`
	// PriorityClasses are created before anything else.
	PriorityClasses []PriorityClass `yaml:"priorityClasses"`
	// Queues are created before the jobs arrive.
	Queues []Queue `yaml:"queues"`
	// Jobs arrive over time.
	Jobs []JobStream `yaml:"jobs"`
	// Actions are what operators do at given times.
	Actions []Action `yaml:"actions"`
	// FairSharing is the scheduler's usage history, in simulated time.
	FairSharing *FairSharing `yaml:"fairSharing"`
	// Reservations turn on reservations for waiting gangs, and backfill around them.
	Reservations *Reservations `yaml:"reservations"`
	// ForecastCheck, when set, is the simulated time between two reads of the live view's expected
	// starts, which the report compares with the starts that followed.
	ForecastCheck Duration `yaml:"forecastCheck"`
	// Snapshots are the simulated moments at which the forecast's snapshot is taken, to be saved
	// in the output folder (snapshot-10m0s.yaml) and replayed (queuesim replay).
	Snapshots []Duration `yaml:"snapshots"`

	file string
	// knownRuntimes says whether the forecast is told each pod's runtime (KnowRuntimes).
	knownRuntimes bool
}

// NodeGroup is count nodes of one size.
type NodeGroup struct {
	Name   string   `yaml:"name"`
	Count  int      `yaml:"count"`
	CPU    Quantity `yaml:"cpu"`
	Memory Quantity `yaml:"memory"`
	GPU    Quantity `yaml:"gpu"`
	line   int
}

// PriorityClass is a scheduling.k8s.io PriorityClass.
type PriorityClass struct {
	Name  string `yaml:"name"`
	Value int32  `yaml:"value"`
}

// Queue is a queue-scheduler Queue.
type Queue struct {
	Name        string              `yaml:"name"`
	Weight      int32               `yaml:"weight"`
	Parent      string              `yaml:"parent"`
	Capability  map[string]Quantity `yaml:"capability"`
	Guarantee   map[string]Quantity `yaml:"guarantee"`
	Reclaimable *bool               `yaml:"reclaimable"`
	State       string              `yaml:"state"`
	// Namespaces is the queue's namespaceSelector: "all" (also when omitted: the simulation submits
	// from one namespace), "none", or a label selector such as "team=a".
	Namespaces string `yaml:"namespaces"`
	line       int
}

// JobStream is Count jobs of one shape arriving from At on: every Every, or at random with a mean
// gap of Every when Random is set.
type JobStream struct {
	Name  string   `yaml:"name"`
	Queue string   `yaml:"queue"`
	At    Duration `yaml:"at"`
	Count int      `yaml:"count"`
	Every Duration `yaml:"every"`
	// Random draws the gaps between arrivals from an exponential distribution of mean Every.
	Random bool `yaml:"random"`
	// Kind is Pods (single pods), Gang (a PodGroup of Pods members, MinMember of them required) or
	// Unit (a batch/v1 Job of Pods pods queued by a QueueUnit).
	Kind      string   `yaml:"kind"`
	Pods      int      `yaml:"pods"`
	MinMember int      `yaml:"minMember"`
	CPU       Quantity `yaml:"cpu"`
	Memory    Quantity `yaml:"memory"`
	GPU       Quantity `yaml:"gpu"`
	// Runtime is how long each pod runs once started, in simulated time.
	Runtime Duration `yaml:"runtime"`
	// Deadline is the pods' runtime bound (spec.activeDeadlineSeconds), in simulated time: a pod
	// still running then is ended Failed, as the kubelet ends it. None when absent.
	Deadline Duration `yaml:"deadline"`
	// Fail ends the pods Failed instead of Succeeded.
	Fail bool `yaml:"fail"`
	// PriorityClass names the pods' PriorityClass.
	PriorityClass string `yaml:"priorityClass"`
	// Timeout is a gang's scheduleTimeoutSeconds.
	Timeout Duration `yaml:"timeout"`
	line    int
	// requests, when set, is what each pod asks for, in place of CPU, Memory and GPU; nodes, when
	// set, are the only nodes its pods may run on (a replay's).
	requests v1.ResourceList
	nodes    []string
}

// Job kinds.
const (
	KindPods = "Pods"
	KindGang = "Gang"
	KindUnit = "Unit"
)

// Action is an operator's change at a time: one of Suspend, Resume, Close, Open names a queue;
// Weight sets a queue's weight.
type Action struct {
	At      Duration     `yaml:"at"`
	Suspend string       `yaml:"suspend"`
	Resume  string       `yaml:"resume"`
	Close   string       `yaml:"close"`
	Open    string       `yaml:"open"`
	Weight  *WeightValue `yaml:"weight"`
	line    int
}

// WeightValue sets a queue's weight.
type WeightValue struct {
	Queue string `yaml:"queue"`
	Value int32  `yaml:"value"`
}

// Duration is a time.Duration written as "90s", "5m", "1h30m".
type Duration struct {
	time.Duration
	line int
}

// UnmarshalYAML reads a duration, refusing negative ones.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (examples: 30s, 5m, 1h30m)", n.Line, n.Value)
	}
	if v < 0 {
		return fmt.Errorf("line %d: duration %s must not be negative", n.Line, n.Value)
	}
	d.Duration, d.line = v, n.Line
	return nil
}

// Quantity is a Kubernetes quantity: "500m", "4", "16Gi".
type Quantity struct {
	resource.Quantity
	set bool
}

// UnmarshalYAML reads a quantity, refusing bad and negative ones.
func (q *Quantity) UnmarshalYAML(n *yaml.Node) error {
	v, err := resource.ParseQuantity(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a quantity (examples: 500m, 4, 16Gi)", n.Line, n.Value)
	}
	if v.Sign() < 0 {
		return fmt.Errorf("line %d: quantity %s must not be negative", n.Line, n.Value)
	}
	q.Quantity, q.set = v, true
	return nil
}

// UnmarshalYAML reads a node group and remembers its line.
func (g *NodeGroup) UnmarshalYAML(n *yaml.Node) error {
	type plain NodeGroup
	g.line = n.Line
	return decodeStrict(n, (*plain)(g), "nodes")
}

// UnmarshalYAML reads a queue and remembers its line.
func (q *Queue) UnmarshalYAML(n *yaml.Node) error {
	type plain Queue
	q.line = n.Line
	return decodeStrict(n, (*plain)(q), "queues")
}

// UnmarshalYAML reads a job stream and remembers its line.
func (j *JobStream) UnmarshalYAML(n *yaml.Node) error {
	type plain JobStream
	j.line = n.Line
	return decodeStrict(n, (*plain)(j), "jobs")
}

// UnmarshalYAML reads an action and remembers its line.
func (a *Action) UnmarshalYAML(n *yaml.Node) error {
	type plain Action
	a.line = n.Line
	return decodeStrict(n, (*plain)(a), "actions")
}

// Load reads and checks a scenario file; every error names the file, the line and the rule.
func Load(path string) (*Scenario, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, raw)
}

// Parse reads and checks a scenario; file names it in errors.
func Parse(file string, raw []byte) (*Scenario, error) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	s := &Scenario{file: file}
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, trimYAML(err))
	}
	s.defaults()
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// trimYAML drops the decoder's "yaml: unmarshal errors:" preamble.
func trimYAML(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return fmt.Errorf("%s", te.Errors[0])
	}
	return err
}

func (s *Scenario) defaults() {
	if s.TimeScale == 0 {
		s.TimeScale = 1
	}
	if s.Sample.Duration == 0 {
		s.Sample.Duration = 10 * time.Second
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.Kind == "" {
			j.Kind = KindPods
		}
		if j.Pods == 0 {
			j.Pods = 1
		}
		if j.Count == 0 {
			j.Count = 1
		}
		if j.Kind == KindGang && j.MinMember == 0 {
			j.MinMember = j.Pods
		}
	}
	for i := range s.Queues {
		if s.Queues[i].Weight == 0 {
			s.Queues[i].Weight = 1
		}
	}
}

// arrivals returns when each job of the stream arrives, in simulated time from the start.
func (j *JobStream) arrivals(rng *rand.Rand) []time.Duration {
	out := make([]time.Duration, 0, j.Count)
	at := j.At.Duration
	for range j.Count {
		out = append(out, at)
		gap := j.Every.Duration
		if j.Random {
			gap = time.Duration(rng.ExpFloat64() * float64(j.Every.Duration))
		}
		at += gap
	}
	return out
}

// decodeStrict decodes a mapping into out, refusing keys out has no field for: a custom
// unmarshaler's node.Decode does not inherit the decoder's KnownFields.
func decodeStrict(n *yaml.Node, out any, section string) error {
	if n.Kind == yaml.MappingNode {
		known := map[string]bool{}
		t := reflect.TypeOf(out).Elem()
		for i := range t.NumField() {
			if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" {
				known[tag] = true
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if key := n.Content[i]; !known[key.Value] {
				return fmt.Errorf("line %d: field %s not found in %s", key.Line, key.Value, section)
			}
		}
	}
	return n.Decode(out)
}
