package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/klog/v2"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
)

// Reasons of the ExpectedStart condition.
const (
	ReasonForecast             = "Forecast"
	ReasonNoStartWithinHorizon = "NoStartWithinHorizon"
)

// The pace of the ExpectedStart conditions.
const (
	// startsRefresh is how often the leader compares the last forecast with the conditions shown:
	// as often as a new forecast is made by default, whatever the interval configured (a longer
	// one leaves the conditions a forecast as old). Only this refresh writes a new start into a
	// condition.
	startsRefresh = config.DefaultForecastInterval
	// startWritesPerRefresh bounds how many conditions one refresh brings up to date (5 writes a
	// second at most); the others wait for the next.
	startWritesPerRefresh = 50
	// leastStartMove is the least move of an expected start that is written: a move within it, or
	// within a tenth of the wait, leaves the condition as it is.
	leastStartMove = time.Minute
)

// startShown is what an ExpectedStart condition shows: the median start, or none within the
// horizon.
type startShown struct {
	p50  time.Time
	none bool
}

// shownStarts remembers, by work key, what each condition this replica wrote in its current term
// shows; a condition it did not write is written once more.
type shownStarts struct {
	mu    sync.Mutex
	byKey map[string]startShown
}

func (s *shownStarts) get(key string) (startShown, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.byKey[key]
	return v, ok
}

// reset forgets everything shown.
func (s *shownStarts) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byKey = nil
}

func (s *shownStarts) set(key string, v startShown, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey == nil {
		s.byKey = map[string]startShown{}
	}
	if !ok {
		delete(s.byKey, key)
		return
	}
	s.byKey[key] = v
}

// shownOf is what a forecast's start shows.
func shownOf(s *visibilityv1beta1.ExpectedStart) startShown {
	if s.P50 == nil {
		return startShown{none: true}
	}
	return startShown{p50: s.P50.Time}
}

// closeTo says whether next is close enough to shown to leave the condition as it is: both none,
// or starts apart by no more than a tenth of the wait (leastStartMove at least).
func (shown startShown) closeTo(next startShown, now time.Time) bool {
	if shown.none || next.none {
		return shown.none == next.none
	}
	tolerance := max(leastStartMove, next.p50.Sub(now)/10)
	move := next.p50.Sub(shown.p50)
	return move <= tolerance && -move <= tolerance
}

// startCondition is the ExpectedStart condition of a start forecast.
func startCondition(s *visibilityv1beta1.ExpectedStart, generation int64) metav1.Condition {
	c := metav1.Condition{Type: schedulingv1beta1.PodGroupExpectedStart, ObservedGeneration: generation}
	at := s.ForecastTime.UTC().Format(time.RFC3339)
	if s.P50 == nil {
		c.Status, c.Reason = metav1.ConditionFalse, ReasonNoStartWithinHorizon
		c.Message = fmt.Sprintf("not expected to start within %s (forecast at %s)", duration.HumanDuration(readmodel.ForecastHorizon), at)
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, ReasonForecast
	p90 := "not within " + duration.HumanDuration(readmodel.ForecastHorizon)
	if s.P90 != nil {
		p90 = "by " + s.P90.UTC().Format(time.RFC3339)
	}
	c.Message = fmt.Sprintf("expected to start at %s; at the 90th percentile of the runtimes, %s (forecast at %s)",
		s.P50.UTC().Format(time.RFC3339), p90, at)
	return c
}

// applyStart brings the ExpectedStart condition of the work of key in conditions up to date with
// the forecast's start s (nil when the work no longer waits, and the condition goes): a start close
// to the one shown leaves it as it is. It returns what the condition shows then, to be remembered
// once written; forget when there is nothing to remember.
func (c *Controller) applyStart(conditions *[]metav1.Condition, key string, s *visibilityv1beta1.ExpectedStart, generation int64) (next startShown, forget bool) {
	if s == nil {
		meta.RemoveStatusCondition(conditions, schedulingv1beta1.PodGroupExpectedStart)
		return startShown{}, true
	}
	next = shownOf(s)
	shown, known := c.shown.get(key)
	present := meta.FindStatusCondition(*conditions, schedulingv1beta1.PodGroupExpectedStart) != nil
	if present && known && shown.closeTo(next, s.ForecastTime.Time) {
		return shown, false
	}
	meta.SetStatusCondition(conditions, startCondition(s, generation))
	return next, false
}

// keepStart leaves the ExpectedStart condition in conditions as the last refresh wrote it while the
// work waits, and takes it out once it does not: the other writes of a PodGroup's or a QueueUnit's
// status never bring a new forecast, so that the refresh's budget bounds those writes.
func keepStart(conditions *[]metav1.Condition, waiting bool) {
	if !waiting {
		meta.RemoveStatusCondition(conditions, schedulingv1beta1.PodGroupExpectedStart)
	}
}

// refreshStarts brings the ExpectedStart conditions up to date with the forecast every
// startsRefresh until ctx ends. A new term starts from nothing shown: every condition is written
// once more.
func (c *Controller) refreshStarts(ctx context.Context) {
	c.shown.reset()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.clock.After(startsRefresh):
		}
		c.refreshPass(ctx)
	}
}

// refreshPass writes at most startWritesPerRefresh ExpectedStart conditions whose start moved, of
// waiting PodGroups and QueueUnits, and takes out those of work that no longer waits; it returns
// how many it wrote. A write that fails is tried again at the next pass. It forecasts only when a
// PodGroup or QueueUnit waits: pods of neither show their start in the live view alone.
func (c *Controller) refreshPass(ctx context.Context) int {
	holders := c.startHolders(ctx)
	var starts readmodel.ExpectedStarts
	if slices.ContainsFunc(holders, func(h startHolder) bool { return h.waits }) {
		starts = c.view.ExpectedStarts()
	}
	written := 0
	for _, w := range holders {
		var s *visibilityv1beta1.ExpectedStart
		if w.waits {
			s = starts.Of(w.key)
		}
		if written >= startWritesPerRefresh || !c.startMoved(w.key, s, w.conditions, starts.At()) {
			continue
		}
		written++
		conditions := slices.Clone(w.conditions)
		next, forget := c.applyStart(&conditions, w.key, s, w.generation)
		c.startWritten(ctx, w.key, next, forget, w.write(conditions))
	}
	return written
}

// startHolder is a PodGroup or QueueUnit whose status may carry an ExpectedStart condition.
type startHolder struct {
	// key names its work in the forecast; waits says whether it waits to start.
	key        string
	waits      bool
	conditions []metav1.Condition
	generation int64
	// write writes its status with conditions in place of its own.
	write func(conditions []metav1.Condition) error
}

// startHolders are the PodGroups, then the QueueUnits, as the informers hold them.
func (c *Controller) startHolders(ctx context.Context) []startHolder {
	pgs, _ := c.acct.Store.PodGroups().List(labels.Everything())
	units, _ := c.acct.Store.QueueUnits().List(labels.Everything())
	out := make([]startHolder, 0, len(pgs)+len(units))
	for _, pg := range pgs {
		out = append(out, startHolder{key: string(visibilityv1beta1.WorkloadPodGroup) + "/" + pg.Namespace + "/" + pg.Name,
			waits: groupWaits(pg.Status), conditions: pg.Status.Conditions, generation: pg.Generation,
			write: func(conditions []metav1.Condition) error {
				updated := pg.DeepCopy()
				updated.Status.Conditions = conditions
				_, err := c.acct.Client.SchedulingV1beta1().PodGroups(pg.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
				return err
			}})
	}
	for _, u := range units {
		out = append(out, startHolder{key: string(visibilityv1beta1.WorkloadQueueUnit) + "/" + u.Namespace + "/" + u.Name,
			waits: !u.Dequeued(), conditions: u.Status.Conditions, generation: u.Generation,
			write: func(conditions []metav1.Condition) error {
				status := u.Status.DeepCopy()
				status.Conditions = conditions
				return c.updateUnitStatus(ctx, u, *status)
			}})
	}
	return out
}

// startWritten remembers what a condition written shows; a write that failed leaves it to the next
// pass.
func (c *Controller) startWritten(ctx context.Context, key string, next startShown, forget bool, err error) {
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Could not write an expected start", "work", key, "err", err)
		c.shown.set(key, startShown{}, false)
		return
	}
	c.shown.set(key, next, !forget)
}

// startMoved says whether the condition of the work of key, whose start is s (nil: it does not
// wait), would change: it is missing, not known to show what this replica wrote, or shows a start
// that moved; or the work no longer waits and it is still there.
func (c *Controller) startMoved(key string, s *visibilityv1beta1.ExpectedStart, conditions []metav1.Condition, at time.Time) bool {
	present := meta.FindStatusCondition(conditions, schedulingv1beta1.PodGroupExpectedStart) != nil
	if s == nil {
		if !present {
			c.shown.set(key, startShown{}, false)
		}
		return present
	}
	shown, known := c.shown.get(key)
	return !present || !known || !shown.closeTo(shownOf(s), at)
}

// groupWaits says whether a PodGroup of this status waits to start: Pending or Inqueue, and not
// scheduled.
func groupWaits(status schedulingv1beta1.PodGroupStatus) bool {
	return (status.Phase == schedulingv1beta1.PodGroupPending || status.Phase == schedulingv1beta1.PodGroupInqueue) &&
		!meta.IsStatusConditionTrue(status.Conditions, schedulingv1beta1.PodGroupScheduled)
}
