package cost

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/infra/sam"
)

// DefaultStack is the defaults of template.yaml, the template this binary carries.
func DefaultStack() Stack {
	s, err := defaultStack()
	if err != nil {
		panic(fmt.Sprintf("cost: the template built in: %v", err))
	}
	return s
}

var defaultStack = sync.OnceValues(func() (Stack, error) { return stackOf(sundial.Template, nil) })

// The template's Capacity=Provisioned defaults, read from the template this binary carries.
var (
	// DefaultTargetUtilization is the auto scaling target, a fraction (TargetUtilization).
	DefaultTargetUtilization = float64(templateDefault("TargetUtilization")) / 100
	// MinWCU and MinRCU are the capacity auto scaling never goes below, summed over the tables
	// and indexes: Timers{Write,Read}CapacityMin on the timers table and on its due index,
	// Log{Write,Read}CapacityMin on the log table and on errorsByDay.
	MinWCU = 2*templateDefault("TimersWriteCapacityMin") + 2*templateDefault("LogWriteCapacityMin")
	MinRCU = 2*templateDefault("TimersReadCapacityMin") + 2*templateDefault("LogReadCapacityMin")
)

// templateDefault is a number parameter's default in the template this binary carries.
func templateDefault(name string) int {
	defaults, err := templateDefaults()
	if err == nil {
		var n int
		if n, err = strconv.Atoi(defaults[name]); err == nil {
			return n
		}
	}
	panic(fmt.Sprintf("cost: the template built in: parameter %s: %v", name, err))
}

var templateDefaults = sync.OnceValues(sundial.Defaults)

// stackOf is the Stack a template (as written: YAML) deploys with the given parameters and
// its defaults for the others.
func stackOf(template []byte, params map[string]string) (Stack, error) {
	t, err := sam.ParseYAML(template)
	if err != nil {
		return Stack{}, err
	}
	resolved, err := t.Params(params)
	if err != nil {
		return Stack{}, err
	}
	var errs []error
	num := func(name string) int {
		n, err := strconv.Atoi(resolved[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("parameter %s=%q: not an integer", name, resolved[name]))
		}
		return n
	}
	s := Stack{
		FetchTick:        time.Duration(num("FetchTickMinutes")) * time.Minute,
		DueShards:        num("DueShards"),
		LogRetentionDays: num("LogRetentionDays"),
		Concurrency:      [4]int{num("P1Concurrency"), num("P2Concurrency"), num("P3Concurrency"), num("P4Concurrency")},
		TimersWriteMax:   num("TimersWriteCapacityMax"),
		LogWriteMax:      num("LogWriteCapacityMax"),
		ReservedConcurrency: num("FetchReservedConcurrency") + num("RecoveryReservedConcurrency") +
			num("LogWriterReservedConcurrency"),
	}
	fn, _ := t.Globals["Function"].(map[string]any)
	ev := &sam.Evaluator{Template: t, Params: resolved}
	memory, err := ev.String(fn["MemorySize"])
	if err == nil {
		s.MemoryMB, err = strconv.Atoi(memory)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("the Globals' Function MemorySize %q: %v", memory, err))
	}
	if len(errs) > 0 {
		return Stack{}, fmt.Errorf("template: %w", errors.Join(errs...))
	}
	return s, nil
}
