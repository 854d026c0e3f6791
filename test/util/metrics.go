package util

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
)

// ScrapeMetrics reads /metrics as the scheduler serves it: the process's legacy registry through
// its handler, over HTTP, in the text format Prometheus scrapes.
func ScrapeMetrics(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	srv := httptest.NewServer(legacyregistry.Handler())
	defer srv.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return testutil.TextToMetricFamilies(resp.Body)
}

// MetricValue is the sum over the samples of family name whose labels include want of a gauge's or
// a counter's value, a histogram's count; 0 and false when there is no such sample.
func MetricValue(families map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	family, ok := families[name]
	if !ok {
		return 0, false
	}
	sum, found := 0.0, false
	for _, m := range family.GetMetric() {
		if !testutil.LabelsMatch(m, want) {
			continue
		}
		found = true
		switch {
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetHistogram() != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.GetUntyped() != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum, found
}

// WaitForMetric scrapes until the sample of name with labels want satisfies ok, or timeout passes;
// the error says the last value seen.
func WaitForMetric(ctx context.Context, name string, want map[string]string, timeout time.Duration, what string, ok func(float64) bool) error {
	var last float64
	var found bool
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		families, err := ScrapeMetrics(ctx)
		if err != nil {
			return false, err
		}
		last, found = MetricValue(families, name, want)
		return found && ok(last), nil
	})
	if err != nil {
		return fmt.Errorf("metric %s%v never %s (found %v, last %v): %w", name, want, what, found, last, err)
	}
	return nil
}
