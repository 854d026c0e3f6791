package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A forecast asked for while another is answered waits its turn and is answered after it; one that
// would wait longer than it may is told to come back (429), and one whose request ends stops waiting.
func TestForecastTurns(t *testing.T) {
	var turns forecastTurns
	ctx := context.Background()
	release, err := turns.take(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turns.take(ctx, time.Millisecond); !apierrors.IsTooManyRequests(err) {
		t.Errorf("waiting past its wait: %v, want 429", err)
	}
	ended, end := context.WithCancel(ctx)
	end()
	if _, err := turns.take(ended, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("a request that ended: %v, want its context's error", err)
	}
	got := make(chan error, 1)
	go func() {
		next, err := turns.take(ctx, time.Minute)
		if err == nil {
			next()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a second forecast answered (%v) while the first held the turn", err)
	default:
	}
	release()
	if err := <-got; err != nil {
		t.Errorf("the second forecast, once the first was answered: %v, want its turn", err)
	}
}
