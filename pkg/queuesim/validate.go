package queuesim

import (
	"errors"
	"fmt"
	"strings"
)

// problems collects what is wrong with a scenario, each with its file and line.
type problems struct {
	file string
	errs []string
}

func (p *problems) add(line int, field, format string, args ...any) {
	p.errs = append(p.errs, fmt.Sprintf("%s:%d: %s: %s", p.file, line, field, fmt.Sprintf(format, args...)))
}

func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(p.errs, "\n"))
}

// validate checks what the types alone cannot: sizes, references between sections, and times.
func (s *Scenario) validate() error {
	p := &problems{file: s.file}
	if s.Duration.Duration <= 0 {
		p.add(s.Duration.line, "duration", "the scenario needs a positive duration, e.g. 30m")
	}
	if s.TimeScale <= 0 {
		p.add(0, "timeScale", "must be positive, got %g", s.TimeScale)
	}
	if len(s.Nodes) == 0 {
		p.add(0, "nodes", "the scenario needs at least one node group")
	}
	for i, g := range s.Nodes {
		field := fmt.Sprintf("nodes[%d]", i)
		if g.Count < 1 {
			p.add(g.line, field+".count", "must be at least 1, got %d", g.Count)
		}
		if !g.CPU.set || g.CPU.IsZero() {
			p.add(g.line, field+".cpu", "each node needs some cpu")
		}
	}
	queues := s.validateQueues(p)
	classes := map[string]bool{}
	for _, c := range s.PriorityClasses {
		classes[c.Name] = true
	}
	for i := range s.Jobs {
		s.Jobs[i].validate(p, fmt.Sprintf("jobs[%d]", i), queues, classes, s.Duration.Duration)
	}
	for i := range s.Actions {
		s.Actions[i].validate(p, fmt.Sprintf("actions[%d]", i), queues, s.Duration.Duration)
	}
	for i, at := range s.Snapshots {
		if at.Duration > s.Duration.Duration {
			p.add(at.line, fmt.Sprintf("snapshots[%d]", i), "%s is after the scenario's end (%s)", at.Duration, s.Duration.Duration)
		}
	}
	s.FairSharing.validate(p)
	s.Reservations.validate(p)
	return p.err()
}

// validateQueues checks the queues and returns the names jobs and actions may use.
func (s *Scenario) validateQueues(p *problems) map[string]bool {
	names := map[string]bool{"default": true}
	for i, q := range s.Queues {
		field := fmt.Sprintf("queues[%d]", i)
		switch {
		case q.Name == "":
			p.add(q.line, field+".name", "a queue needs a name")
		case q.Name == "root" || q.Name == "default":
			p.add(q.line, field+".name", "%q exists in every cluster already", q.Name)
		case names[q.Name]:
			p.add(q.line, field+".name", "queue %q is defined twice", q.Name)
		}
		names[q.Name] = true
		if q.Weight < 1 {
			p.add(q.line, field+".weight", "must be at least 1, got %d", q.Weight)
		}
		switch q.State {
		case "", "Open", "Closed", "Suspended":
		default:
			p.add(q.line, field+".state", "must be Open, Closed or Suspended, got %q", q.State)
		}
		if _, err := q.namespaceSelector(); err != nil {
			p.add(q.line, field+".namespaces", "must be all, none or a label selector such as team=a: %v", err)
		}
	}
	for i, q := range s.Queues {
		if q.Parent != "" && q.Parent != "root" && !names[q.Parent] {
			p.add(q.line, fmt.Sprintf("queues[%d].parent", i), "queue %q is not defined in queues", q.Parent)
		}
	}
	return names
}

func (j *JobStream) validate(p *problems, field string, queues, classes map[string]bool, end interface{ Seconds() float64 }) {
	if !queues[j.Queue] {
		p.add(j.line, field+".queue", "queue %q is not defined in queues", j.Queue)
	}
	switch j.Kind {
	case KindPods, KindGang, KindUnit:
	default:
		p.add(j.line, field+".kind", "must be Pods, Gang or Unit, got %q", j.Kind)
	}
	if j.Pods < 1 || j.Count < 1 {
		p.add(j.line, field, "pods and count must be at least 1, got %d and %d", j.Pods, j.Count)
	}
	if j.MinMember > j.Pods {
		p.add(j.line, field+".minMember", "%d is more than the job's %d pods", j.MinMember, j.Pods)
	}
	if !j.CPU.set || j.CPU.IsZero() {
		p.add(j.line, field+".cpu", "each pod needs some cpu")
	}
	if j.Runtime.Duration <= 0 {
		p.add(j.line, field+".runtime", "each pod needs a positive runtime, e.g. 5m")
	}
	if j.Count > 1 && j.Every.Duration <= 0 {
		p.add(j.line, field+".every", "%d jobs need a positive gap between arrivals", j.Count)
	}
	if j.PriorityClass != "" && !classes[j.PriorityClass] {
		p.add(j.line, field+".priorityClass", "%q is not defined in priorityClasses", j.PriorityClass)
	}
	if j.At.Seconds() > end.Seconds() {
		p.add(j.line, field+".at", "%s is after the end of the scenario (%s)", j.At.Duration, end)
	}
}

func (a *Action) validate(p *problems, field string, queues map[string]bool, end interface{ Seconds() float64 }) {
	set := 0
	for _, name := range []string{a.Suspend, a.Resume, a.Close, a.Open} {
		if name != "" {
			set++
			if !queues[name] {
				p.add(a.line, field, "queue %q is not defined in queues", name)
			}
		}
	}
	if a.Weight != nil {
		set++
		if !queues[a.Weight.Queue] {
			p.add(a.line, field+".weight.queue", "queue %q is not defined in queues", a.Weight.Queue)
		}
		if a.Weight.Value < 1 {
			p.add(a.line, field+".weight.value", "must be at least 1, got %d", a.Weight.Value)
		}
	}
	if set != 1 {
		p.add(a.line, field, "an action does exactly one of suspend, resume, close, open or weight; it has %d", set)
	}
	if a.At.Seconds() > end.Seconds() {
		p.add(a.line, field+".at", "%s is after the end of the scenario (%s)", a.At.Duration, end)
	}
}
