package controller

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// forecastTurnWait is the longest a WhatIf or ForecastSnapshot waits for its turn before it is
// told to come back: one is answered within seconds at the largest sizes measured.
const forecastTurnWait = 10 * time.Second

// forecastTurns lets the forecasts asked for (WhatIfs, ForecastSnapshots) be answered one at a
// time, in the order they came: one user asking again and again waits behind the others who asked
// meanwhile, rather than taking every turn.
type forecastTurns struct {
	once sync.Once
	sem  *semaphore.Weighted
}

// take waits for the turn, at most wait, and returns its release. Past wait it answers 429 (to come
// back in a second); a request that ends meanwhile, its context's error.
func (t *forecastTurns) take(ctx context.Context, wait time.Duration) (release func(), err error) {
	t.once.Do(func() { t.sem = semaphore.NewWeighted(1) })
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := t.sem.Acquire(waitCtx, 1); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, apierrors.NewTooManyRequests("other forecasts asked for are being answered", 1)
		}
		return nil, err
	}
	return func() { t.sem.Release(1) }, nil
}
