// Package gangs holds the facts about gangs that more than one part of the scheduler reads, each in
// one place: the reclaims under way for gangs, which Reclaim starts and ends, and Gang reads so that
// it neither denies such a gang nor clears its members' nominations meanwhile. The composition root
// builds the one instance of a scheduler and hands it to those two plugins.
package gangs

import (
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// AttemptSlack is how long an attempt lasts beyond its victims' longest grace period: then the
// nominations it made are released, and the gang may try again.
const AttemptSlack = 30 * time.Second

// Attempts remembers, per gang ("namespace/name"), the reclaim under way: where its missing members
// were nominated and which victims must go before they fit. While one is under way, the gang evicts
// nothing more, and is neither denied nor stripped of its nominations.
type Attempts struct {
	mu     sync.Mutex
	byGang map[string]*Attempt
	// clock times the attempts.
	clock clock.WithDelayedExecution
}

// Attempt is one gang's reclaim.
type Attempt struct {
	Key string
	// Nominated holds the node each missing member was nominated to.
	Nominated map[types.UID]string
	Victims   []*v1.Pod
	// Deadline is when the attempt expires.
	Deadline time.Time
}

// NewAttempts returns no attempts, timed by clk.
func NewAttempts(clk clock.WithDelayedExecution) *Attempts {
	return &Attempts{byGang: map[string]*Attempt{}, clock: clk}
}

// Begin records the attempt of the gang key and calls expire with it once it lasted longer than its
// victims' grace periods and AttemptSlack, unless a later attempt of the gang replaced it or it
// ended first.
func (a *Attempts) Begin(key string, nominated map[types.UID]string, victims []*v1.Pod, expire func(*Attempt)) *Attempt {
	lasts := longestGrace(victims) + AttemptSlack
	at := &Attempt{Key: key, Nominated: nominated, Victims: victims, Deadline: a.clock.Now().Add(lasts)}
	a.mu.Lock()
	a.byGang[key] = at
	a.mu.Unlock()
	a.clock.AfterFunc(lasts, func() {
		if a.End(at) {
			expire(at)
		}
	})
	return at
}

// End forgets the attempt and says whether it was still the gang's.
func (a *Attempts) End(at *Attempt) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byGang[at.Key] != at {
		return false
	}
	delete(a.byGang, at.Key)
	return true
}

// Reclaiming says whether the gang's reclaim is under way: begun, not ended, not past its deadline.
func (a *Attempts) Reclaiming(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := a.byGang[key]
	return ok && a.clock.Now().Before(at.Deadline)
}

// UnderWay returns, while the gang's victims are not all gone (counted says a victim still holds its
// room), the node member was nominated to and why the gang waits. Once they are gone, a member that
// still does not fit may try again; the attempt is kept until it expires, which releases the
// nominations of the members that did not bind.
func (a *Attempts) UnderWay(key string, member types.UID, counted func(*v1.Pod) bool) (string, string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	at := a.byGang[key]
	if at == nil {
		return "", "", false
	}
	left := 0
	for _, v := range at.Victims {
		if counted(v) {
			left++
		}
	}
	if left == 0 {
		return "", "", false
	}
	return at.Nominated[member], fmt.Sprintf("podgroup %s: waiting for %d of the %d pods evicted for it to leave", key, left, len(at.Victims)), true
}

func longestGrace(pods []*v1.Pod) time.Duration {
	var longest int64
	for _, p := range pods {
		if g := p.Spec.TerminationGracePeriodSeconds; g != nil {
			longest = max(longest, *g)
		}
	}
	return time.Duration(longest) * time.Second
}
