// Package textout writes text made of many formatted lines and reports the first error once, at
// the end, so that a printer of tables and reports need not check every line.
package textout

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Lines writes formatted text to W and keeps the first error in Err; after an error it writes
// nothing more.
type Lines struct {
	W   io.Writer
	Err error
}

// Printf writes one formatted piece of text.
func (l *Lines) Printf(format string, args ...any) {
	if l.Err == nil {
		_, l.Err = fmt.Fprintf(l.W, format, args...)
	}
}

// Resources prints a resource list as Kubernetes prints quantities, sorted by name:
// "cpu=8,memory=16Gi"; "<none>" when empty.
func Resources(list v1.ResourceList) string {
	return eachByName(list, ",", func(name v1.ResourceName, q resource.Quantity) string { return string(name) + "=" + q.String() })
}

// ResourceHours prints amounts held over time, given in resource-seconds (a core held for a second is
// 1, a byte of memory held for a second is 1, as the queues' usage counts them), in hours and units
// a reader knows, sorted by name: "cpu 275.7 core-h, memory 295.9 GiB-h, nvidia.com/gpu 12.0 gpu-h";
// "<none>" when empty.
func ResourceHours(list v1.ResourceList) string {
	return eachByName(list, ", ", func(name v1.ResourceName, q resource.Quantity) string {
		return string(name) + " " + resourceHours(name, q.AsApproximateFloat64()/3600)
	})
}

// eachByName prints each resource of list with write, sorted by name and joined by sep; "<none>"
// when empty.
func eachByName(list v1.ResourceList, sep string, write func(v1.ResourceName, resource.Quantity) string) string {
	if len(list) == 0 {
		return "<none>"
	}
	parts := make([]string, 0, len(list))
	for _, name := range slices.Sorted(maps.Keys(list)) {
		parts = append(parts, write(name, list[name]))
	}
	return strings.Join(parts, sep)
}

// binaryUnits are the units of a byte, each 1024 times the last.
var binaryUnits = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// resourceHours writes hours of a resource: cores of cpu, bytes of memory and storage in the
// largest binary unit that leaves at least one, and of anything else its unit, named by the last
// part of its name (nvidia.com/gpu: gpu).
func resourceHours(name v1.ResourceName, hours float64) string {
	switch {
	case name == v1.ResourceCPU:
		return amount(hours) + " core-h"
	case isBytes(name):
		unit := 0
		for unit < len(binaryUnits)-1 && hours >= 1024 {
			hours /= 1024
			unit++
		}
		return amount(hours) + " " + binaryUnits[unit] + "-h"
	}
	unit := string(name)
	if i := strings.LastIndex(unit, "/"); i >= 0 {
		unit = unit[i+1:]
	}
	return amount(hours) + " " + unit + "-h"
}

// isBytes says whether a resource is counted in bytes.
func isBytes(name v1.ResourceName) bool {
	return name == v1.ResourceMemory || name == v1.ResourceStorage || name == v1.ResourceEphemeralStorage ||
		strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// amount writes a non-negative number with one decimal, or with three significant digits below one:
// "275.7", "0.276", "0"; "<0.001" for less, but more than none.
func amount(x float64) string {
	switch {
	case x <= 0:
		return "0"
	case x < 0.001:
		return "<0.001"
	case x < 1:
		return strconv.FormatFloat(x, 'g', 3, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}
