package queuesim

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Files a run writes to its output folder.
const (
	ReportFile = "report.txt"
	ChartFile  = "allocation.svg"
	SeriesFile = "series.csv"
	ResultFile = "result.json"
)

// Save writes the report, the chart, the samples as CSV and the whole result as JSON to dir.
func (r *Result) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	writers := map[string]func(*os.File) error{
		ReportFile: func(f *os.File) error { return r.WriteReport(f) },
		ChartFile:  func(f *os.File) error { return r.WriteChart(f) },
		SeriesFile: r.writeSeries,
		ResultFile: func(f *os.File) error {
			enc := json.NewEncoder(f)
			enc.SetIndent("", "  ")
			return enc.Encode(r)
		},
	}
	for name, write := range writers {
		if err := writeFile(filepath.Join(dir, name), write); err != nil {
			return err
		}
	}
	for _, t := range r.Snapshots {
		if err := saveSnapshot(filepath.Join(dir, t.File()), t.Snapshot); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// writeSeries writes one row a sample: seconds since the start, queue, state, cpu allocated and
// deserved, pending pods, decayed usage in core-hours.
func (r *Result) writeSeries(f *os.File) error {
	w := csv.NewWriter(f)
	if err := w.Write([]string{"seconds", "queue", "state", "allocated_cpu", "deserved_cpu", "pending_pods", "usage_cpu_hours"}); err != nil {
		return err
	}
	for _, s := range r.Samples {
		row := []string{strconv.FormatFloat(s.At.Seconds(), 'f', 1, 64), s.Queue, s.State,
			strconv.FormatFloat(s.Allocated, 'f', 3, 64), strconv.FormatFloat(s.Deserved, 'f', 3, 64), strconv.Itoa(s.Pending),
			strconv.FormatFloat(s.Usage, 'f', 3, 64)}
		if err := w.Write(row); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}
