package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// CrowdedFirings is how many instances due on the same second make it crowded: they are
// claimed, run and logged together, while the seconds around them are idle. Jenkins' H
// (schedule/spread.go) spreads them.
const CrowdedFirings = 20

// CrowdedListed is how many crowded seconds a plan lists (the busiest).
const CrowdedListed = 10

// crowdBudget bounds each walk of the first day (schedule.Next calls); past it, the rest of
// the schedules are not looked at for crowding.
const crowdBudget = 5_000_000

// CrowdedSecond is a second on which many instances are due at once.
type CrowdedSecond struct {
	At      time.Time `json:"at"`
	Firings int       `json:"firings"`
	// Timers are the timers due then, with how many of their instances, most first.
	Timers []CrowdedTimer `json:"timers"`
}

// CrowdedTimer is one timer's share of a crowded second.
type CrowdedTimer struct {
	Timer     string `json:"timer"` // [app:]name
	Instances int    `json:"instances"`
}

// key is the instance's timer key, for H (a plan instance of the default app has App "").
func (in Instance) key() timer.Key {
	return timer.Key{App: in.App, Timer: in.Timer, Tenant: in.Tenant}
}

// scheduleKey groups instances whose schedules fire together: the settings', and the
// instance's own key for a schedule that spreads its start (H is resolved per instance).
func (in Instance) scheduleKey() string {
	k := in.settings().ScheduleKey()
	if schedule.MaySpread(in.Schedule) {
		k += " " + in.key().String()
	}
	return k
}

// crowdWarnings finds the seconds of the plan's first day (from In.From) on which
// CrowdedFirings or more active instances are due, and names them with a warning that
// suggests H. Schedules that do not parse are Compute's errors, not reported here.
func (p *Plan) crowdWarnings(in Input) {
	type share struct {
		timer string
		n     int
	}
	type schedGroup struct {
		sch    schedule.Schedule
		shares []share // per timer, in first-seen order
	}
	// Instances with the same schedule fire together: each schedule is walked once.
	var groups []*schedGroup
	byKey := map[string]*schedGroup{}
	for _, inst := range in.Instances {
		// An Instance standing for many (Count, a manifest above MaxListedInstances) whose
		// schedule spreads is spread over them by construction: not a crowd.
		if !inst.Active || (inst.weight() > 1 && schedule.MaySpread(inst.Schedule)) {
			continue
		}
		k := inst.scheduleKey()
		g, ok := byKey[k]
		if !ok {
			sch, err := inst.settings().ParseScheduleFor(inst.key())
			if err != nil {
				sch = nil
			}
			g = &schedGroup{sch: sch}
			byKey[k] = g
			groups = append(groups, g)
		}
		name := timer.Key{App: inst.App, Timer: inst.Timer}.Name()
		if i := slices.IndexFunc(g.shares, func(s share) bool { return s.timer == name }); i >= 0 {
			g.shares[i].n += inst.weight()
		} else {
			g.shares = append(g.shares, share{name, inst.weight()})
		}
	}
	// Two walks of the first day: the instances due per second, then who is due on the
	// crowded ones (a map of every second's timers would grow with every sub-minute schedule).
	end := in.From.Add(24 * time.Hour)
	walk := func(g *schedGroup, budget *int, at func(sec int64)) {
		for t := in.From.Add(-time.Nanosecond); *budget > 0; *budget-- {
			next, ok := g.sch.Next(t)
			if !ok || !next.Before(end) {
				return
			}
			at(next.Unix())
			t = next
		}
	}
	total := map[int64]int{}
	budget := crowdBudget
	for _, g := range groups {
		if g.sch == nil {
			continue
		}
		n := 0
		for _, s := range g.shares {
			n += s.n
		}
		walk(g, &budget, func(sec int64) { total[sec] += n })
	}
	if budget == 0 {
		p.Warnings = append(p.Warnings, "crowded seconds: the schedules fire too often to walk them all for a day; only part of them were checked")
	}
	bySecond := map[int64][]share{}
	budget = crowdBudget
	for _, g := range groups {
		if g.sch == nil {
			continue
		}
		walk(g, &budget, func(sec int64) {
			if total[sec] >= CrowdedFirings {
				bySecond[sec] = append(bySecond[sec], g.shares...)
			}
		})
	}
	p.Crowded = []CrowdedSecond{}
	for sec, shares := range bySecond {
		c := CrowdedSecond{At: time.Unix(sec, 0).UTC()}
		byTimer := map[string]int{}
		for _, s := range shares {
			c.Firings += s.n
			byTimer[s.timer] += s.n
		}
		if c.Firings < CrowdedFirings {
			continue
		}
		for name, n := range byTimer {
			c.Timers = append(c.Timers, CrowdedTimer{Timer: name, Instances: n})
		}
		slices.SortFunc(c.Timers, func(a, b CrowdedTimer) int {
			return cmp.Or(cmp.Compare(b.Instances, a.Instances), cmp.Compare(a.Timer, b.Timer))
		})
		p.Crowded = append(p.Crowded, c)
	}
	slices.SortFunc(p.Crowded, func(a, b CrowdedSecond) int {
		return cmp.Or(cmp.Compare(b.Firings, a.Firings), a.At.Compare(b.At))
	})
	more := len(p.Crowded) - CrowdedListed
	p.Crowded = p.Crowded[:min(len(p.Crowded), CrowdedListed)]
	for _, c := range p.Crowded {
		var names []string
		for i, t := range c.Timers {
			if i == 3 {
				names = append(names, fmt.Sprintf("%d more", len(c.Timers)-3))
				break
			}
			if t.Instances > 1 {
				names = append(names, fmt.Sprintf("%s ×%d", t.Timer, t.Instances))
			} else {
				names = append(names, t.Timer)
			}
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("crowded second %s: %d instances due at once (%s); "+
			"spread their start with H (\"H H(2-4) * * *\", \"H/15 * * * *\", \"H:H\", \"every 5m spread\"), which picks a stable instant per timer and tenant",
			c.At.Format(time.RFC3339), c.Firings, strings.Join(names, ", ")))
	}
	if more > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d more crowded seconds in the first day are not listed", more))
	}
}
