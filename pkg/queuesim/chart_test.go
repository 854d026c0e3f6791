package queuesim

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func sampleResult() *Result {
	r := &Result{Scenario: "t <&> s", Duration: time.Minute, Capacity: 12}
	for i := range 7 {
		at := time.Duration(i) * 10 * time.Second
		r.Samples = append(r.Samples,
			Sample{At: at, Queue: "a", Allocated: float64(i), Deserved: 4},
			Sample{At: at, Queue: "b", Allocated: 12 - float64(i), Deserved: 8, Pending: 2})
	}
	return r
}

// The chart is well-formed SVG: one panel a queue, each with an allocated and a deserved line.
func TestChartIsValidSVG(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleResult().WriteChart(&buf); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&buf)
	var root string
	polylines, panels := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = el.Name.Space + " " + el.Name.Local
			}
			switch el.Name.Local {
			case "polyline":
				polylines++
				for _, a := range el.Attr {
					if a.Name.Local == "points" && len(strings.Fields(a.Value)) != 7 {
						t.Errorf("a line has %d points, want 7", len(strings.Fields(a.Value)))
					}
				}
			case "g":
				panels++
			}
		}
	}
	if root != "http://www.w3.org/2000/svg svg" || panels != 2 || polylines != 4 {
		t.Errorf("root %q, %d panels, %d lines; want an svg root, 2 panels, 4 lines", root, panels, polylines)
	}
}

func TestSummaries(t *testing.T) {
	var b []Sample
	for _, s := range sampleResult().Samples {
		if s.Queue == "b" {
			b = append(b, s)
		}
	}
	q := summarize("b", b, 12)
	// b holds 12, 11, …, 6 against 8: 9 on average, 6 at the end, 13/7 cpu from its share on average.
	if q.FinalAllocated != 6 || math.Abs(q.MeanDeserved-8) > 1e-9 || math.Abs(q.MeanAllocated-9) > 1e-9 || math.Abs(q.Deviation*12-13.0/7) > 1e-9 {
		t.Errorf("summary %+v", q)
	}
	if got := percentile([]time.Duration{3, 1, 2, 4}, 50); got != 2 {
		t.Errorf("p50 = %v, want 2", got)
	}
	var report bytes.Buffer
	if err := sampleResult().WriteReport(&report); err != nil || !strings.Contains(report.String(), "QUEUE") {
		t.Errorf("report: %v\n%s", err, report.String())
	}
}

// With a usage history, each panel draws a third line, the queue's decayed usage, on a scale of its
// own labelled in core-hours.
func TestChartDrawsUsage(t *testing.T) {
	r := sampleResult()
	for i := range r.Samples {
		r.Samples[i].Usage = float64(i)
	}
	var buf bytes.Buffer
	if err := r.WriteChart(&buf); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if n := strings.Count(svg, "<polyline"); n != 6 {
		t.Errorf("%d lines, want 6 (allocated, deserved and usage for 2 queues)", n)
	}
	if !strings.Contains(svg, "13.0 core-h") || !strings.Contains(svg, "decayed usage in core-hours") {
		t.Errorf("the usage scale or its legend is missing:\n%s", svg)
	}
}
