package chaosrun

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Print writes the run's table: what the chaos did, what the platform did about it, and the
// invariants' verdict, then every violation found.
func (r *Report) Print(w io.Writer) {
	res := r.Result
	fmt.Fprintf(w, "\nchaos run: %d timers, %s of chaos (+%s to catch up), seed %d\n", res.Timers,
		r.ChaosEnd.Sub(r.Started).Round(time.Second), catchUp(r), r.Config.Seed)
	fmt.Fprintf(w, "faults: %s; kill rate %.0f%% of processor invocations\n", r.Config.Faults, 100*r.Config.KillRate)
	rc := r.Config.Replica
	fmt.Fprintf(w, "replica: index lag %s (%.0f%% of changes), stale reads %s (%.0f%% of eventually consistent reads)\n\n",
		rc.IndexLag, 100*rc.IndexLagRate, rc.StaleReads, 100*rc.StaleReadRate)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, v any, note string) { fmt.Fprintf(tw, "%s\t%v\t  %s\n", name, v, note) }
	fmt.Fprintln(tw, "INJECTED\t\t")
	row("processor invocations killed", r.Kills.Processor, "mid-invocation: holding, claiming, running the action or writing")
	row("fetch / recovery / log writer invocations killed", fmt.Sprintf("%d / %d / %d", r.Kills.Fetch, r.Kills.Recovery, r.Kills.LogWriter), "")
	row("idle processor instances killed", r.Kills.Idle, "")
	row("processor freezes", fmt.Sprintf("%d (%d processes)", r.Freezes.Events, r.Freezes.Processes), "every busy processor SIGSTOPped 25–28 s, longer than a lease")
	row("DynamoDB faults", r.faults("DynamoDB"), r.faultKinds("DynamoDB"))
	row("SQS faults", r.faults("SQS"), r.faultKinds("SQS"))
	row("SQS messages sent twice", r.Faults["SQS SendMessageBatch dup"], "")
	row("clock offsets", offsets(r.Offsets), fmt.Sprintf("%d processes", len(r.Offsets)))
	row("stale item reads", r.Replica.StaleReads, fmt.Sprintf("eventually consistent reads answered with the item as it was %s before", rc.StaleReads))
	row("index entries hidden", r.Replica.HiddenEntries, fmt.Sprintf("index queries that did not yet show a change made within %s", rc.IndexLag))
	fmt.Fprintln(tw, "OBSERVED\t\t")
	row("firings due", res.FiringsDue, "distinct scheduled firings that came due (retries not counted)")
	row("executions logged", res.Executions, "")
	row("executed", res.Executed, fmt.Sprintf("action ran to an outcome; %d succeeded", res.Succeeded))
	row("retried", res.Retried, "attempts > 1")
	row("recovered", res.Recovered, fmt.Sprintf("leases taken back; %d of them after their action had been called", res.RecoveredActions))
	row("missed", res.Missed, "misfire policy skip")
	row("duplicates suppressed (claims lost)", r.ClaimsLost, "duplicate or stale messages acknowledged without running")
	row("zombie results discarded", res.ZombiesDiscarded, "fenced writes refused; each one's execution was recovered")
	row("results not written", r.NotRecorded, "the processor's write failed after the SDK's retries: recovery ended it")
	row("firings re-sent by recovery", r.Requeued, "never claimed: their message went down with a killed or frozen batch, or a lost reply")
	row("processor batches failed", r.FailedBatches, "killed invocations: their messages redelivered")
	for _, st := range r.Streams {
		row("log writer batches failed", st.FunctionErrors+st.PartialFailures, fmt.Sprintf("of %d; retried from the stream: %d records read, %d delivered, %d filtered out, %d discarded",
			st.Invocations, st.Read, st.Delivered, st.Filtered, st.Discarded))
	}
	row("log writer batches given up, redriven", r.Redriven.Batches, fmt.Sprintf("from its failure queue at the end: %d records, %d executions logged", r.Redriven.Records, r.Redriven.Logged))
	row("cold starts", r.Processes.ColdStarts, fmt.Sprintf("processes started; %d ended mid-invocation, %d timed out", r.Processes.Exits, r.Processes.Timeouts))
	row("action calls", res.ActionCalls, "")
	row("async executions started", res.AsyncStarted, "answered 202; the worker heartbeats and reports through the client")
	row("heartbeats", res.Heartbeats, "accepted: the lease extended by 8 s; some sent within 2 s of its expiry, racing recovery's stale reads")
	row("heartbeats refused (lease expired)", res.HeartbeatsExpired, fmt.Sprintf("sent after the lease's expiry; %d more refused as recovery had ended the execution", res.HeartbeatsFenced))
	row("recoveries refused (lease live)", r.RecoveriesRefused, "recovery read a lease as expired (stale read, lagging index) that a heartbeat had extended: its conditional write refused")
	row("async recovered", res.AsyncRecovered, "silent or refused workers' executions ended by recovery")
	row("zombie completes refused", fmt.Sprintf("%d of %d", res.ZombieRefused, res.ZombieCompletes), "late Completes of workers gone silent past their lease (the rest came before recovery ran)")
	row("lateness p50 / p95 / max", fmt.Sprintf("%s / %s / %s", ms(res.LatenessP50), ms(res.LatenessP95), ms(res.LatenessMax)), "first attempts, claim − due, clocks corrected")
	fmt.Fprintln(tw, "INVARIANTS\t\t")
	row("overlaps", res.ActionOverlaps+res.LogOverlaps, fmt.Sprintf("actions %d (action server), outcomes after a newer claim %d (log)", res.ActionOverlaps, res.LogOverlaps))
	row("pool over its slots", res.PoolOverruns, fmt.Sprintf("%s: at most %d of %d slots held at once (action server)", PoolResource, res.PoolMaxHolders, PoolSlots))
	row("lost", res.Lost, "firings neither executed nor accounted for (see check.go)")
	row("instants unaccounted", res.Unaccounted, fmt.Sprintf("neither run nor recorded as skipped; %d recorded skipped, %d buffered runs, %d stopped by the next instant (overlap policies)", res.SkippedInstants, res.Buffered, res.Stopped))
	row("unfinished at stop", res.UnfinishedAtStop, fmt.Sprintf("claimed, still running: recovery finds the expired lease and ends it; %d buffered instants still waiting (due after the chaos, as the run before them ended then)", res.BufferedAtStop))
	calls := 0
	for _, n := range r.IAM.Calls {
		calls += n
	}
	row("IAM denials", len(r.IAM.Denied), fmt.Sprintf("of %d calls checked against each function's role (template.yaml)", calls))
	_ = tw.Flush()
	if res.OK() {
		fmt.Fprintln(w, "\nPASS: no overlap, nothing lost, no zombie write.")
		return
	}
	fmt.Fprintf(w, "\nFAIL: %d violation(s):\n", len(res.Problems))
	for _, p := range res.Problems {
		fmt.Fprintln(w, "  - "+p)
	}
	fmt.Fprintf(w, "evidence: %s (log.jsonl is every function's log)\n", r.WorkDir)
}

func catchUp(r *Report) string {
	if r.CaughtUp.IsZero() {
		return "no catch-up"
	}
	return r.CaughtUp.Sub(r.ChaosEnd).Round(100 * time.Millisecond).String()
}

func (r *Report) faults(service string) int {
	n := 0
	for k, v := range r.Faults {
		if strings.HasPrefix(k, service+" ") && !strings.HasSuffix(k, " dup") {
			n += v
		}
	}
	return n
}

// faultKinds sums the faults of a service by kind: "throttle 120, 5xx 40, 5xx_after 20".
func (r *Report) faultKinds(service string) string {
	by := map[string]int{}
	for k, v := range r.Faults {
		f := strings.Fields(k)
		if len(f) == 3 && f[0] == service && f[2] != "dup" {
			by[f[2]] += v
		}
	}
	var parts []string
	for _, kind := range []string{"throttle", "5xx", "5xx_after"} {
		if by[kind] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", kind, by[kind]))
		}
	}
	return strings.Join(parts, ", ")
}

func offsets(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	slices.Sort(ds)
	return fmt.Sprintf("%s … %s", ms(ds[0]), ms(ds[len(ds)-1]))
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }
