package perf

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

var (
	repeats = flag.Int("repeat", 3, "how often each case is repeated; the table shows median and spread")
	outDir  = flag.String("bench-out", "../../out/bench", "folder for results.md and results.json")
)

// rotations is how many times a case of sides sides is repeated: -repeat, made up to a multiple of
// sides, so that the order of the sides turns evenly (each side runs in each place as often) and
// drift over the run weighs on all alike.
func rotations(sides int) int {
	return (*repeats + sides - 1) / sides * sides
}

// row is one line of the results table, with the raw numbers behind it.
type row struct {
	Case     string             `json:"case"`
	Ours     string             `json:"ours"`
	Upstream string             `json:"upstream"`
	Ratio    string             `json:"ratio"`
	Target   string             `json:"target"`
	Values   map[string]float64 `json:"values"`
}

// results collects the rows of the cases that ran, in order, and a line for each run.
var results struct {
	mu   sync.Mutex
	rows []row
	runs []string
}

// logRun logs what one run measured, and keeps the line for runs.log: a benchmark's own log is cut
// to its first ten lines.
func logRun(b *testing.B, format string, args ...any) {
	b.Helper()
	line := fmt.Sprintf(format, args...)
	b.Log(line)
	results.mu.Lock()
	defer results.mu.Unlock()
	results.runs = append(results.runs, line)
}

func record(r row) {
	results.mu.Lock()
	defer results.mu.Unlock()
	results.rows = append(results.rows, r)
}

// writeResults prints the table and writes it with the raw numbers to -bench-out, and each run's
// line to runs.log there.
func writeResults(stdout io.Writer) error {
	results.mu.Lock()
	defer results.mu.Unlock()
	if len(results.rows) == 0 {
		return nil
	}
	var table strings.Builder
	table.WriteString("| case | queue-scheduler | upstream | ratio | target |\n|---|---|---|---|---|\n")
	for _, r := range results.rows {
		fmt.Fprintf(&table, "| %s | %s | %s | %s | %s |\n", r.Case, r.Ours, r.Upstream, r.Ratio, r.Target)
	}
	if _, err := io.WriteString(stdout, "\n"+table.String()); err != nil {
		return err
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(results.rows, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*outDir, "results.json"), raw, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*outDir, "runs.log"), []byte(strings.Join(results.runs, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*outDir, "results.md"), []byte(table.String()), 0o644)
}

// spread is a repeated measurement: its median and its range.
type spread struct{ median, lo, hi float64 }

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	median := s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{median: median, lo: s[0], hi: s[len(s)-1]}
}

// format prints the median and, over several repeats, the range: "229 (200–285)".
func (s spread) format(digits int, unit string) string {
	f := "%." + fmt.Sprint(digits) + "f"
	out := fmt.Sprintf(f, s.median) + unit
	if s.lo != s.hi {
		out += fmt.Sprintf(" ("+f+"–"+f+")", s.lo, s.hi)
	}
	return out
}
