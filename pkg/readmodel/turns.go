package readmodel

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// forecastTurnWait is the longest a WhatIf or ForecastSnapshot waits for its turn before it is
// told to come back: one is answered within seconds at the largest sizes measured.
const forecastTurnWait = 10 * time.Second

// forecastTurns lets the forecasts asked for (WhatIfs, ForecastSnapshots) be answered one at a
// time, in the order they came, and each user have one asked at a time: one user asking again and
// again, or many times at once, waits behind the others rather than taking their turns.
type forecastTurns struct {
	once sync.Once
	sem  *semaphore.Weighted

	mu sync.Mutex
	// asking holds the users with a forecast waiting or being answered.
	asking map[string]bool
}

// take waits for the turn, at most wait, and returns its release. A user who has a forecast waiting
// or being answered already, or who waits past wait, is answered 429 (to come back in a second).
func (t *forecastTurns) take(ctx context.Context, wait time.Duration) (release func(), err error) {
	t.once.Do(func() { t.sem, t.asking = semaphore.NewWeighted(1), map[string]bool{} })
	user := ""
	if u, ok := request.UserFrom(ctx); ok {
		user = u.GetName()
	}
	t.mu.Lock()
	if t.asking[user] {
		t.mu.Unlock()
		return nil, apierrors.NewTooManyRequests("a forecast you asked for is being answered: one at a time", 1)
	}
	t.asking[user] = true
	t.mu.Unlock()
	done := func() {
		t.mu.Lock()
		delete(t.asking, user)
		t.mu.Unlock()
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := t.sem.Acquire(waitCtx, 1); err != nil {
		done()
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, apierrors.NewTooManyRequests("other forecasts asked for are being answered", 1)
		}
		return nil, apierrors.NewTimeoutError("the request ended while it waited for its turn", 1)
	}
	return func() {
		t.sem.Release(1)
		done()
	}, nil
}
