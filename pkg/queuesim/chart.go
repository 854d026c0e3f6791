package queuesim

import (
	"fmt"
	"html"
	"io"
	"math"
	"time"

	"github.com/queue-scheduler/queue-scheduler/pkg/textout"
)

// Chart sizes, in SVG user units.
const (
	panelWidth  = 720
	panelHeight = 150
	marginLeft  = 60
	marginRight = 70
	panelGap    = 50
	marginTop   = 40
)

// WriteChart draws, for each queue, its allocated cpu (solid) against its deserved cpu (dashed) over
// the scenario, and its decayed usage (dotted, on the right-hand scale of core-hours), one panel a
// queue, as a standalone SVG.
func (r *Result) WriteChart(out io.Writer) error {
	byQueue := map[string][]Sample{}
	top := scales{cpu: 1}
	for _, s := range r.Samples {
		byQueue[s.Queue] = append(byQueue[s.Queue], s)
		top.cpu = math.Max(top.cpu, math.Max(s.Allocated, s.Deserved))
		top.usage = math.Max(top.usage, s.Usage)
	}
	names := sortedKeys(byQueue)
	height := marginTop + len(names)*(panelHeight+panelGap)
	width := marginLeft + panelWidth + marginRight
	l := &textout.Lines{W: out}
	l.Printf(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	l.Printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	l.Printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	title := "allocated cpu (solid) and deserved cpu (dashed) per queue"
	if top.usage > 0 {
		title += ", decayed usage in core-hours (dotted, right)"
	}
	l.Printf(`<text x="%d" y="20" font-size="15">%s: %s</text>`+"\n", marginLeft, html.EscapeString(r.Scenario), title)
	for i, name := range names {
		y := marginTop + i*(panelHeight+panelGap)
		r.panel(l, name, byQueue[name], y, top)
	}
	l.Printf("</svg>\n")
	return l.Err
}

// scales are the tops of a chart's axes: cpu on the left, usage in core-hours on the right (0: no
// usage drawn).
type scales struct{ cpu, usage float64 }

// panel draws one queue's lines with their axes, and the operators' actions as dotted lines.
func (r *Result) panel(l *textout.Lines, name string, samples []Sample, y int, top scales) {
	end := math.Max(r.Duration.Seconds(), 1)
	xOf := func(at time.Duration) float64 { return marginLeft + at.Seconds()/end*panelWidth }
	yOf := func(cpu float64) float64 { return float64(y+panelHeight) - cpu/top.cpu*panelHeight }
	l.Printf(`<g><text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", marginLeft, y-6, html.EscapeString(name))
	l.Printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", marginLeft, y+panelHeight, marginLeft+panelWidth, y+panelHeight)
	l.Printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", marginLeft, y, marginLeft, y+panelHeight)
	l.Printf(`<text x="%d" y="%d" text-anchor="end">%.0f</text>`+"\n", marginLeft-6, y+10, top.cpu)
	l.Printf(`<text x="%d" y="%d" text-anchor="end">0</text>`+"\n", marginLeft-6, y+panelHeight)
	l.Printf(`<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", marginLeft+panelWidth, y+panelHeight+16, r.Duration)
	allocated, deserved := "", ""
	for _, s := range samples {
		allocated += fmt.Sprintf("%.1f,%.1f ", xOf(s.At), yOf(s.Allocated))
		deserved += fmt.Sprintf("%.1f,%.1f ", xOf(s.At), yOf(s.Deserved))
	}
	for _, a := range r.Actions {
		x := xOf(a.At)
		l.Printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#888" stroke-dasharray="2,3"/>`+"\n", x, y, x, y+panelHeight)
		l.Printf(`<text x="%.1f" y="%d" fill="#555" font-size="10">%s</text>`+"\n", x+3, y+12, html.EscapeString(a.What))
	}
	l.Printf(`<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="%s"/>`+"\n", allocated)
	l.Printf(`<polyline fill="none" stroke="#d62728" stroke-width="1.5" stroke-dasharray="6,4" points="%s"/>`+"\n", deserved)
	if top.usage > 0 {
		usage := ""
		for _, s := range samples {
			usage += fmt.Sprintf("%.1f,%.1f ", xOf(s.At), float64(y+panelHeight)-s.Usage/top.usage*panelHeight)
		}
		l.Printf(`<text x="%d" y="%d" fill="#2ca02c">%.1f core-h</text>`+"\n", marginLeft+panelWidth+2, y+10, top.usage)
		l.Printf(`<polyline fill="none" stroke="#2ca02c" stroke-width="1.5" stroke-dasharray="2,3" points="%s"/>`+"\n", usage)
	}
	l.Printf("</g>\n")
}
