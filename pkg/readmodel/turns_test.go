package readmodel

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// A forecast asked for while another is answered waits its turn and is answered after it, rather
// than refused; one that would wait longer than it may is told to come back (429), as is a user who
// asks again before the first is answered, and one whose request ends stops waiting.
func TestForecastTurns(t *testing.T) {
	c, _ := whatIfFixture(t)
	as := func(name string) context.Context {
		return request.WithUser(context.Background(), &user.DefaultInfo{Name: name})
	}
	release, err := c.forecast.turns.take(as("alice"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.forecast.turns.take(as("bob"), time.Millisecond); !apierrors.IsTooManyRequests(err) {
		t.Errorf("bob waiting past his wait: %v, want 429", err)
	}
	if _, err := c.forecast.turns.take(as("alice"), time.Minute); !apierrors.IsTooManyRequests(err) {
		t.Errorf("alice asking again before her first is answered: %v, want 429 at once", err)
	}
	ended, end := context.WithCancel(as("bob"))
	end()
	if _, err := c.forecast.turns.take(ended, time.Minute); !apierrors.IsTimeout(err) {
		t.Errorf("a request that ended: %v, want a timeout", err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := c.WhatIf(as("bob"), "ns", visibilityv1beta1.WhatIfSpec{}, false)
		got <- err
	}()
	// Once bob waits, nothing answers him while alice holds the turn.
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		c.forecast.turns.mu.Lock()
		defer c.forecast.turns.mu.Unlock()
		return c.forecast.turns.asking["bob"], nil
	}); err != nil {
		t.Fatal("bob's what-if never asked for its turn")
	}
	select {
	case err := <-got:
		t.Fatalf("bob's what-if answered (%v) while alice's held the turn", err)
	default:
	}
	release()
	if err := <-got; err != nil {
		t.Errorf("bob's what-if, once alice's was answered: %v, want its answer", err)
	}
	if release, err := c.forecast.turns.take(as("alice"), time.Minute); err != nil {
		t.Errorf("alice asking again once answered: %v, want her turn", err)
	} else {
		release()
	}
}
