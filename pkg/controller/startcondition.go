package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/klog/v2"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// Reasons of the ExpectedStart condition.
const (
	ReasonForecast             = "Forecast"
	ReasonNoStartWithinHorizon = "NoStartWithinHorizon"
)

// The pace of the ExpectedStart conditions.
const (
	// startsRefresh is how often the leader compares the forecast with the conditions shown: as
	// often as a new forecast is made.
	startsRefresh = forecastInterval
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

// shownStarts remembers, by work key, what each condition written shows; a condition this replica
// did not write (it just became leader) is written once more.
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
		c.Message = fmt.Sprintf("not expected to start within %s (forecast at %s)", duration.HumanDuration(forecastHorizon), at)
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, ReasonForecast
	p90 := "not within " + duration.HumanDuration(forecastHorizon)
	if s.P90 != nil {
		p90 = "by " + s.P90.UTC().Format(time.RFC3339)
	}
	c.Message = fmt.Sprintf("expected to start at %s; at the 90th percentile of the runtimes, %s (forecast at %s)",
		s.P50.UTC().Format(time.RFC3339), p90, at)
	return c
}

// setStartCondition brings the ExpectedStart condition of the work of key in conditions up to date
// with the forecast's start s (nil when the work no longer waits, and the condition goes): a start
// close to the one shown leaves it as it is.
func (c *Controller) setStartCondition(conditions *[]metav1.Condition, key string, s *visibilityv1beta1.ExpectedStart, generation int64) {
	shown, known := c.forecast.shown.get(key)
	present := meta.FindStatusCondition(*conditions, schedulingv1beta1.PodGroupExpectedStart) != nil
	if s == nil {
		if present {
			meta.RemoveStatusCondition(conditions, schedulingv1beta1.PodGroupExpectedStart)
		}
		c.forecast.shown.set(key, startShown{}, false)
		return
	}
	next := shownOf(s)
	if present && known && shown.closeTo(next, s.ForecastTime.Time) {
		return
	}
	meta.SetStatusCondition(conditions, startCondition(s, generation))
	c.forecast.shown.set(key, next, true)
}

// startOfWork is the forecast's start of the work of kind, namespace and name, nil when the
// forecast does not hold it (it does not wait).
func (c *Controller) startOfWork(kind visibilityv1beta1.WorkloadKind, namespace, name string) *visibilityv1beta1.ExpectedStart {
	return c.expectedStarts().of(string(kind) + "/" + namespace + "/" + name)
}

// refreshStarts compares the forecast with the ExpectedStart conditions shown, every
// startsRefresh until ctx ends, and brings up to date at most startWritesPerRefresh of those that
// moved: PodGroups through their sync, QueueUnits at once.
func (c *Controller) refreshStarts(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.clock.After(startsRefresh):
		}
		starts := c.expectedStarts()
		budget := startWritesPerRefresh
		pgs, _ := c.acct.PodGroups().List(labels.Everything())
		for _, pg := range pgs {
			key := pg.Namespace + "/" + pg.Name
			if budget > 0 && c.startMoved(string(visibilityv1beta1.WorkloadPodGroup)+"/"+key, starts, pg.Status.Conditions) {
				budget--
				c.enqueuePodGroup(key)
			}
		}
		units, _ := c.acct.QueueUnits().List(labels.Everything())
		for _, u := range units {
			key := string(visibilityv1beta1.WorkloadQueueUnit) + "/" + u.Namespace + "/" + u.Name
			if budget <= 0 || !c.startMoved(key, starts, u.Status.Conditions) {
				continue
			}
			budget--
			if err := c.writeUnitStart(ctx, u); err != nil {
				klog.FromContext(ctx).V(2).Info("Could not write a QueueUnit's expected start", "queueUnit", klog.KObj(u), "err", err)
			}
		}
	}
}

// startMoved says whether the condition of the work of key would change with starts.
func (c *Controller) startMoved(key string, starts expectedStarts, conditions []metav1.Condition) bool {
	s := starts.of(key)
	present := meta.FindStatusCondition(conditions, schedulingv1beta1.PodGroupExpectedStart) != nil
	if s == nil {
		return present
	}
	shown, known := c.forecast.shown.get(key)
	return !present || !known || !shown.closeTo(shownOf(s), starts.at)
}

// writeUnitStart writes a QueueUnit's ExpectedStart condition, if it changed.
func (c *Controller) writeUnitStart(ctx context.Context, u *schedulingv1beta1.QueueUnit) error {
	status := *u.Status.DeepCopy()
	var s *visibilityv1beta1.ExpectedStart
	if u.Status.Phase != schedulingv1beta1.QueueUnitDequeued {
		s = c.startOfWork(visibilityv1beta1.WorkloadQueueUnit, u.Namespace, u.Name)
	}
	c.setStartCondition(&status.Conditions, string(visibilityv1beta1.WorkloadQueueUnit)+"/"+u.Namespace+"/"+u.Name, s, u.Generation)
	if apiequality.Semantic.DeepEqual(status, u.Status) {
		return nil
	}
	return c.updateUnitStatus(ctx, u, status)
}
