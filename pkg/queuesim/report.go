package queuesim

import (
	"io"
	"text/tabwriter"
	"time"

	"github.com/queue-scheduler/queue-scheduler/pkg/textout"
)

// WriteReport prints the result as a table per queue, then the actions and the cluster's numbers.
func (r *Result) WriteReport(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	l := &textout.Lines{W: w}
	l.Printf("Scenario %q: %s simulated on %.0f cpu\n\n", r.Scenario, r.Duration, r.Capacity)
	l.Printf("QUEUE\tALLOCATED (mean/final)\tDESERVED (mean/final)\tUSAGE core-h\tDEVIATION\tWAIT p50\tWAIT p99\tDONE\tFAILED\tPER MIN\tEVICTED\tGANGS DONE\tGANGS TIMED OUT\tGANG WAIT p99\n")
	for _, q := range r.Queues {
		gangWait := "—"
		if q.GangWaitP99 > 0 {
			gangWait = round(q.GangWaitP99).String()
		}
		l.Printf("%s\t%.1f / %.1f\t%.1f / %.1f\t%.1f\t%.1f%%\t%s\t%s\t%d\t%d\t%.1f\t%d\t%d\t%d\t%s\n", q.Name,
			q.MeanAllocated, q.FinalAllocated, q.MeanDeserved, q.FinalDeserved, q.FinalUsage, 100*q.Deviation,
			round(q.WaitP50), round(q.WaitP99), q.Completed, q.Failed, q.PerMinute, q.Evictions, q.GangsCompleted, q.GangsTimedOut, gangWait)
	}
	if l.Err != nil {
		return l.Err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := r.writeGangs(out); err != nil {
		return err
	}
	l = &textout.Lines{W: out}
	if f := r.Forecasts; f != nil {
		known := ""
		if f.KnownRuntimes {
			known = ", each pod's runtime known ahead"
		}
		l.Printf("\nExpected starts%s: %d predictions (forecasts read: %d), %d compared with the start that followed\n", known, f.Predictions, f.Checks, f.Compared)
		l.Printf("  (each prediction: a waiting job's expected start (p50) in the live view, against its actual start; error = how far apart, relative = error over the wait from the forecast to the start (a minute at least); p50 and p90 below are the median and 90th percentile over the predictions; the horizon is the forecast's week)\n")
		l.Printf("  error p50 %s, p90 %s; relative to the wait p50 %.0f%%, p90 %.0f%%\n", round(f.MedianError), round(f.P90Error),
			100*f.MedianRelative, 100*f.P90Relative)
		l.Printf("  %d with no later work started first and no operator action in between: relative p50 %.0f%%, p90 %.0f%%\n", f.Undisturbed,
			100*f.UndisturbedMedianRelative, 100*f.UndisturbedP90Relative)
		l.Printf("  %d predicted to start within the scenario did not; %d predicted to start beyond the horizon did; %d predicted beyond the end, not judged\n",
			f.Late, f.Unforeseen, f.BeyondEnd)
	}
	l.Printf("\nCluster utilisation: %.1f%% of the cpu held by running pods, on average\n", 100*r.Utilisation)
	l.Printf("Deviation: how far a queue's allocation was from its deserved share, as a share of the cluster, on average while it had work\n")
	l.Printf("Usage: the queue's decayed usage at the end, in simulated core-hours (each counting half after the usage half-life)\n")
	if len(r.Actions) > 0 {
		l.Printf("Operator actions:\n")
		for _, a := range r.Actions {
			l.Printf("  %s  %s\n", round(a.At), a.What)
		}
	}
	return l.Err
}

// writeGangs prints each gang's wait: when its first reservation promised it would start, when it
// started, and how busy the cluster was while it waited.
func (r *Result) writeGangs(out io.Writer) error {
	if len(r.Gangs) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	l := &textout.Lines{W: w}
	l.Printf("\nGANG\tQUEUE\tCREATED\tFIRST RESERVED START\tSTARTED\tWAITED\tUTILISATION WHILE WAITING\n")
	for _, g := range r.Gangs {
		reserved, started, waited := "—", "never", round(r.Duration-g.Created).String()+"+"
		if g.Reserved {
			reserved = round(g.FirstReservedStart).String()
		}
		if g.Ran {
			started, waited = round(g.Started).String(), round(g.Started-g.Created).String()
		}
		l.Printf("%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\n", g.Name, g.Queue, round(g.Created), reserved, started, waited, 100*g.UtilisationWhileWaiting)
	}
	if l.Err != nil {
		return l.Err
	}
	return w.Flush()
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}
