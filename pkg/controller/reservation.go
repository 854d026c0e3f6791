package controller

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

// Reasons of the Reserved condition.
const (
	ReasonStartPlanned = "StartPlanned"
	ReasonNoStart      = "NoStartWithinWindow"
	ReasonStarted      = "Started"
	ReasonReleased     = "Released"
	ReasonLapsed       = "Lapsed"
)

// shownNodes is how many nodes a Reserved message names.
const shownNodes = 5

// reservation is what the plan in force says of one PodGroup.
type reservation struct {
	r *timeline.Reservation
	// due: the room was free when the plan was made.
	due bool
	// unplaced: the group was planned and cannot start within the window.
	unplaced bool
	// lapsed: the group's reservation lapsed, and the group is left out of the plans for a while.
	lapsed *timeline.Lapse
	// unknown: the planner has not published its first plan yet (it just started): the condition
	// stays as it is.
	unknown bool
}

// reservationOf reads the PodGroup's reservation in the plan in force.
func (c *Controller) reservationOf(pg *schedulingv1beta1.PodGroup) reservation {
	plan := c.acct.StartPlans.Latest()
	if plan == nil {
		return reservation{unknown: !c.acct.StartPlans.Known()}
	}
	key := pg.Namespace + "/" + pg.Name
	r := plan.Reservation(key)
	return reservation{r: r, due: r != nil && r.Due(plan.At), unplaced: slices.Contains(plan.Unplaced, key), lapsed: plan.LapseOf(key)}
}

// setReservedCondition says whether the group holds a reservation, from when and on which nodes;
// once it holds none, whether it started or was let go. A group that never held one gets the
// condition only when it was planned and cannot start within the window.
func setReservedCondition(pg *schedulingv1beta1.PodGroup, status *schedulingv1beta1.PodGroupStatus, r reservation) {
	was := meta.FindStatusCondition(status.Conditions, schedulingv1beta1.PodGroupReserved)
	condition := metav1.Condition{Type: schedulingv1beta1.PodGroupReserved, ObservedGeneration: pg.Generation}
	switch {
	case r.unknown:
		return
	case r.r != nil:
		condition.Status, condition.Reason, condition.Message = metav1.ConditionTrue, ReasonStartPlanned, reservedMessage(r)
	case r.unplaced:
		condition.Status, condition.Reason = metav1.ConditionFalse, ReasonNoStart
		condition.Message = "no start found within the planning window: the running pods' runtime bounds do not free enough room by then"
	case r.lapsed != nil:
		condition.Status, condition.Reason = metav1.ConditionFalse, ReasonLapsed
		condition.Message = fmt.Sprintf("the reserved room was free from %s and the gang did not start: something the plan does not model holds it back "+
			"(pod affinity, topology spread, volumes, ports or claims); the room is let go, and the gang is planned again from %s",
			r.lapsed.Since.UTC().Format(time.RFC3339), r.lapsed.Until.UTC().Format(time.RFC3339))
	case was == nil:
		return
	case meta.IsStatusConditionTrue(status.Conditions, schedulingv1beta1.PodGroupScheduled) && was.Reason != ReasonStarted:
		// The plan lets a gang go as its members are reserved, before they are bound.
		condition.Status, condition.Reason, condition.Message = metav1.ConditionFalse, ReasonStarted, "minMember members scheduled: the reservation is over"
	case was.Status == metav1.ConditionTrue:
		condition.Status, condition.Reason = metav1.ConditionFalse, ReasonReleased
		condition.Message = "the reservation was let go: the group is no longer among the first waiting gangs its queue takes"
	default:
		return
	}
	meta.SetStatusCondition(&status.Conditions, condition)
}

// reservedMessage names a reservation's start, end and nodes.
func reservedMessage(r reservation) string {
	names := make([]string, 0, min(len(r.r.Nodes), shownNodes))
	for _, share := range r.r.Nodes[:min(len(r.r.Nodes), shownNodes)] {
		names = append(names, share.Node)
	}
	nodes := strings.Join(names, ", ")
	if more := len(r.r.Nodes) - len(names); more > 0 {
		nodes += fmt.Sprintf(" and %d more", more)
	}
	when := freeNow
	if !r.due {
		when = startsFrom + r.r.Start.UTC().Format(time.RFC3339)
	}
	until := ""
	if !r.r.Open() && !r.due {
		until = fmt.Sprintf(" for %s", r.r.End.Sub(r.r.Start))
	}
	return fmt.Sprintf("room reserved on %d node(s) (%s), %s%s", len(r.r.Nodes), nodes, when, until)
}

// How a StartPlanned message says when the room is the gang's.
const (
	freeNow    = "free now"
	startsFrom = "from "
)

// ReservedStart reads the start a Reserved condition read at now promises: the time it names, or
// now for room free now; ok is false for any other condition.
func ReservedStart(c metav1.Condition, now time.Time) (start time.Time, ok bool) {
	if c.Type != schedulingv1beta1.PodGroupReserved || c.Reason != ReasonStartPlanned {
		return time.Time{}, false
	}
	if strings.HasSuffix(c.Message, ", "+freeNow) {
		return now, true
	}
	_, after, found := strings.Cut(c.Message, "), "+startsFrom)
	if !found {
		return time.Time{}, false
	}
	text, _, _ := strings.Cut(after, " ")
	start, err := time.Parse(time.RFC3339, text)
	return start, err == nil
}
