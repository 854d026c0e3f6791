package accounting

import (
	"testing"
	"time"
)

func TestReclaimUnderWayUntilOverOrDue(t *testing.T) {
	a := &Accounting{}
	if a.Reclaiming("ns/g") {
		t.Fatal("a gang nobody recorded is reclaiming")
	}
	a.ReclaimUnderWay("ns/g", time.Now().Add(time.Hour))
	a.ReclaimUnderWay("ns/due", time.Now().Add(-time.Second))
	if !a.Reclaiming("ns/g") || a.Reclaiming("ns/due") || a.Reclaiming("ns/other") {
		t.Error("want only ns/g reclaiming: recorded and not due")
	}
	a.ReclaimOver("ns/g")
	if a.Reclaiming("ns/g") {
		t.Error("ns/g still reclaiming once over")
	}
}
