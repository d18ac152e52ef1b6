package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// LogQuery is the domain's (timer.LogQuery); the name stays for callers under infra/ until
// they say timer.LogQuery.
type LogQuery = timer.LogQuery

// Create writes a new instance; timer.ErrExists if it is already there.
func (s *Store) Create(ctx context.Context, in timer.Instance) error {
	item, err := attributevalue.MarshalMap(toItem(in))
	if err != nil {
		return fmt.Errorf("encode %s: %w", in.Key, err)
	}
	// An UpdateItem that sets every attribute, on condition that the item is new: the same
	// item and the same write units as a conditional PutItem, allowed to the roles that may
	// change timer items (the API function's may not put one: template.yaml).
	var upd expression.UpdateBuilder
	for _, name := range slices.Sorted(maps.Keys(item)) {
		if name != "pk" && name != "sk" {
			upd = upd.Set(expression.Name(name), expression.Value(item[name]))
		}
	}
	cond := expression.Name("pk").AttributeNotExists()
	_, err = s.update(ctx, s.timers, map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]}, upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		return fmt.Errorf("%w: %s", timer.ErrExists, in.Key)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", in.Key, err)
	}
	return nil
}

// UpdateSettings replaces an instance's settings without touching its lease or version (so a
// running execution keeps its fence). When reschedule is true and the instance is idle,
// nextRun is set to next (zero: no next run); a running instance reschedules when it finishes.
func (s *Store) UpdateSettings(ctx context.Context, key timer.Key, st timer.Settings, reschedule bool, next time.Time) (timer.Instance, error) {
	return s.updateSettings(ctx, key, st, reschedule, next, nil)
}

// UpdateSettingsIf is UpdateSettings on condition that the instance's schedule, timeout and
// priority are still expect (timer.ErrChanged otherwise): a publish must not overwrite an
// operator's edit made after it read the instance.
func (s *Store) UpdateSettingsIf(ctx context.Context, key timer.Key, st timer.Settings, reschedule bool, next time.Time, expect timer.Overridable) (timer.Instance, error) {
	return s.updateSettings(ctx, key, st, reschedule, next, &expect)
}

func (s *Store) updateSettings(ctx context.Context, key timer.Key, st timer.Settings, reschedule bool, next time.Time, expect *timer.Overridable) (timer.Instance, error) {
	n := expression.Name
	// settings builds the update afresh for each use: an UpdateBuilder's copies share their
	// operation lists, so extending one copy would extend the other too.
	settings := func() expression.UpdateBuilder {
		upd := expression.Set(n("schedule"), expression.Value(st.Schedule)).
			Set(n("timezone"), expression.Value(st.Timezone)).
			Set(n("priority"), expression.Value(st.Priority)).
			Set(n("timeoutMs"), expression.Value(st.Timeout.Milliseconds())).
			Set(n("leaseMs"), expression.Value(st.Lease().Milliseconds())).
			Set(n("maxRetries"), expression.Value(st.MaxRetries)).
			Set(n("retryDelayMs"), expression.Value(st.RetryDelay.Milliseconds())).
			Set(n("action"), expression.Value(st.Action)).
			Set(n("misfire"), expression.Value(st.Misfire)).
			Set(n("retryBackoff"), expression.Value(st.RetryBackoff)).
			Set(n("async"), expression.Value(st.Async)).
			Set(n("heartbeatMs"), expression.Value(st.Heartbeat.Milliseconds()))
		upd = setDST(upd, st.DST)
		if st.Overlap != "" {
			upd = upd.Set(n("overlap"), expression.Value(st.Overlap))
		} else {
			upd = upd.Remove(n("overlap"))
		}
		upd = setResources(upd, st.Resources)
		upd = setCalendar(upd, st)
		// An instance written before the byApp index existed joins it at its next settings
		// write (a publish writes every instance's); the values never change.
		upd = upd.Set(n(attrByApp), expression.Value(appAttr(key.App))).Set(n(attrByAppKey), expression.Value(byAppKey(key)))
		if a := alertRulesToItem(st.Alerts); a != nil {
			upd = upd.Set(n("alerts"), expression.Value(a))
		} else {
			upd = upd.Remove(n("alerts"))
		}
		if a := autoPauseToItem(st.AutoPause); a != nil {
			upd = upd.Set(n("autoPause"), expression.Value(a))
		} else {
			upd = upd.Remove(n("autoPause"))
		}
		if d := deadlinesToItem(st.Deadlines); d != nil {
			upd = upd.Set(n("deadlines"), expression.Value(d))
		} else {
			upd = upd.Remove(n("deadlines"))
		}
		if d := depsToItem(st.Deps); d != nil {
			upd = upd.Set(n("deps"), expression.Value(d))
		} else {
			upd = upd.Remove(n("deps"))
		}
		if len(st.Parameters) > 0 {
			upd = upd.Set(n("parameters"), expression.Value(st.Parameters))
		} else {
			upd = upd.Remove(n("parameters"))
		}
		if len(st.Properties) > 0 {
			return upd.Set(n("properties"), expression.Value(st.Properties))
		}
		return upd.Remove(n("properties"))
	}
	cond := n("pk").AttributeExists()
	if expect != nil {
		cond = cond.And(overridableIs(*expect))
	}
	if reschedule {
		idle := cond.And(n("execId").AttributeNotExists())
		withNext := settings().Remove(n("pendingScheduledAt")).Remove(n("pendingAttempt")).Remove(n("requeuedAt")).Remove(n("waiting"))
		if next.IsZero() {
			withNext = withNext.Remove(n("nextRun")).Remove(n("dueShard")).Remove(n("dueAt"))
		} else {
			withNext = withNext.Set(n("nextRun"), expression.Value(ms(next)))
		}
		out, err := s.update(ctx, s.timers, instanceKey(key), withNext, &idle, types.ReturnValueAllNew)
		if err == nil {
			in, err := decodeInstance(out.Attributes)
			if err != nil {
				return in, err
			}
			return s.syncDueIndex(ctx, in)
		}
		if !isConditionFailed(err) {
			return timer.Instance{}, fmt.Errorf("update %s: %w", key, err)
		}
	}
	out, err := s.update(ctx, s.timers, instanceKey(key), settings(), &cond, types.ReturnValueAllNew)
	if isConditionFailed(err) {
		return timer.Instance{}, s.changedOrGone(ctx, key)
	}
	if err != nil {
		return timer.Instance{}, fmt.Errorf("update %s: %w", key, err)
	}
	return decodeInstance(out.Attributes)
}

// changedOrGone tells why a conditional write on an instance failed: timer.ErrNotFound if it
// is not there, else timer.ErrChanged (someone changed it since it was read).
func (s *Store) changedOrGone(ctx context.Context, key timer.Key) error {
	if _, err := s.Get(ctx, key); err != nil {
		return err
	}
	return fmt.Errorf("%w: %s was changed meanwhile", timer.ErrChanged, key)
}

// syncDueIndex makes the due index agree with active/idle/nextRun after an operator's change:
// an active idle instance keyed at its next run (the caller sends the firing itself when the
// fetch has passed it), an inactive or unscheduled one out. A running instance keeps its
// entry; its finish places the next run.
func (s *Store) syncDueIndex(ctx context.Context, in timer.Instance) (timer.Instance, error) {
	if in.Running() {
		return in, nil
	}
	n := expression.Name
	var upd expression.UpdateBuilder
	var cond expression.ConditionBuilder
	if in.Active && !in.NextRun.IsZero() {
		upd = s.placement(expression.UpdateBuilder{}, in.Key, "dueShard").Set(n("dueAt"), expression.Value(ms(in.NextRun)))
		cond = n("active").Equal(expression.Value(true)).And(n("execId").AttributeNotExists()).And(n("nextRun").Equal(expression.Value(ms(in.NextRun))))
	} else {
		upd = expression.Remove(n("dueShard")).Remove(n("dueAt"))
		cond = n("pk").AttributeExists().And(n("execId").AttributeNotExists())
	}
	out, err := s.update(ctx, s.timers, instanceKey(in.Key), upd, &cond, types.ReturnValueAllNew)
	if isConditionFailed(err) {
		return s.Get(ctx, in.Key) // changed again meanwhile (claimed, say); that change set the index
	}
	if err != nil {
		return timer.Instance{}, fmt.Errorf("index %s: %w", in.Key, err)
	}
	return decodeInstance(out.Attributes)
}

// RunNow sets nextRun to now and activates the instance (OutSystems "Run Now" on a
// deactivated timer activates it). It returns the instance so the caller can send the firing
// at once when it is idle; a running instance fires again when its execution finishes.
func (s *Store) RunNow(ctx context.Context, key timer.Key, now time.Time) (timer.Instance, error) {
	return s.SetNextRun(ctx, key, now, true)
}

// RunNowWith is RunNow with parameter overrides (timer.EncodeParams; "" is RunNow): they are
// written with the next run, in the same write, on an idle instance only (a running one is
// refused, timer.ErrRunningParams: its finish would take them for its own run's).
func (s *Store) RunNowWith(ctx context.Context, key timer.Key, now time.Time, params string) (timer.Instance, error) {
	if params == "" {
		return s.RunNow(ctx, key, now)
	}
	return s.setNextRun(ctx, key, now, true, params, false)
}

// RunNowIgnoringAfter is RunNowWith whose run bypasses the dependency gate
// (timer.Instance.RunIgnoreAfter, written with the next run, on an idle instance only:
// timer.ErrRunningIgnoreAfter otherwise).
func (s *Store) RunNowIgnoringAfter(ctx context.Context, key timer.Key, now time.Time, params string) (timer.Instance, error) {
	return s.setNextRun(ctx, key, now, true, params, true)
}

// SetNextRun sets the next run (OutSystems' dynamic Next_Run, or Wake) and, if activate,
// activates the instance. During a run the new value stands when the run finishes.
func (s *Store) SetNextRun(ctx context.Context, key timer.Key, next time.Time, activate bool) (timer.Instance, error) {
	return s.setNextRun(ctx, key, next, activate, "", false)
}

func (s *Store) setNextRun(ctx context.Context, key timer.Key, next time.Time, activate bool, params string, ignoreAfter bool) (timer.Instance, error) {
	n := expression.Name
	upd := func() expression.UpdateBuilder { // afresh for each use: builders share their lists
		u := expression.Set(n("nextRun"), expression.Value(ms(next))).
			Remove(n("pendingScheduledAt")).Remove(n("pendingAttempt")).Remove(n("requeuedAt")).Remove(n("waiting"))
		if ignoreAfter {
			u = u.Set(n("runIgnoreAfter"), expression.Value(true))
		} else {
			u = u.Remove(n("runIgnoreAfter"))
		}
		if params != "" {
			return u.Set(n("runParams"), expression.Value(params))
		}
		return u
	}
	cond := n("pk").AttributeExists()
	if params != "" || ignoreAfter {
		cond = cond.And(n("execId").AttributeNotExists())
	}
	var out *dynamodb.UpdateItemOutput
	var err error
	if activate {
		// Activating is an operator's choice, recorded as such; on an active timer it is not.
		inactive := cond.And(n("active").Equal(expression.Value(false)))
		act := upd().Set(n("active"), expression.Value(true)).Set(n("activeBy"), expression.Value(timer.ActiveByOperator))
		if out, err = s.update(ctx, s.timers, instanceKey(key), act, &inactive, types.ReturnValueAllNew); isConditionFailed(err) {
			out, err = s.update(ctx, s.timers, instanceKey(key), upd(), &cond, types.ReturnValueAllNew)
		}
	} else {
		out, err = s.update(ctx, s.timers, instanceKey(key), upd(), &cond, types.ReturnValueAllNew)
	}
	if isConditionFailed(err) && (params != "" || ignoreAfter) {
		if _, gerr := s.Get(ctx, key); gerr != nil {
			return timer.Instance{}, gerr
		}
		if ignoreAfter {
			return timer.Instance{}, fmt.Errorf("%w: %s", timer.ErrRunningIgnoreAfter, key)
		}
		return timer.Instance{}, fmt.Errorf("%w: %s", timer.ErrRunningParams, key)
	}
	if isConditionFailed(err) {
		return timer.Instance{}, fmt.Errorf("%w: %s", timer.ErrNotFound, key)
	}
	if err != nil {
		return timer.Instance{}, fmt.Errorf("run now %s: %w", key, err)
	}
	in, err := decodeInstance(out.Attributes)
	if err != nil {
		return in, err
	}
	return s.syncDueIndex(ctx, in)
}

// SetActive activates or deactivates an instance, recording who did (timer.ActiveBy*).
// Deactivating never stops a running execution; it only keeps the instance out of the due
// index from now on.
//
// An operator's choice is recorded only when it changes the flag (activating an active timer
// leaves it following the manifest). The manifest's flag never overrides an operator's choice
// (timer.ErrChanged if the operator's is in force); a timer or tenant that is gone does.
func (s *Store) SetActive(ctx context.Context, key timer.Key, active bool, by string) (timer.Instance, error) {
	n := expression.Name
	upd := expression.Set(n("active"), expression.Value(active)).Set(n("activeBy"), expression.Value(by))
	if by == timer.ActiveByOperator { // an operator's activate or plain deactivate ends a pause
		upd = upd.Remove(n("pauseNote")).Remove(n("pausedBy")).Remove(n("pausedAt")).Remove(n("resumeAt"))
	}
	cond := n("pk").AttributeExists()
	switch by {
	case timer.ActiveByOperator:
		cond = cond.And(n("active").NotEqual(expression.Value(active)))
	case timer.ActiveByManifest:
		cond = cond.And(n("activeBy").AttributeNotExists().Or(n("activeBy").NotEqual(expression.Value(timer.ActiveByOperator))))
	}
	out, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueAllNew)
	if isConditionFailed(err) && by == timer.ActiveByOperator {
		in, gerr := s.Get(ctx, key)
		if gerr != nil || in.Active != active { // gone, or changed again meanwhile
			return in, cmp.Or(gerr, s.changedOrGone(ctx, key))
		}
		return in, nil // it already was: nothing to change
	}
	if isConditionFailed(err) {
		return timer.Instance{}, s.changedOrGone(ctx, key)
	}
	if err != nil {
		return timer.Instance{}, fmt.Errorf("set active %s: %w", key, err)
	}
	in, err := decodeInstance(out.Attributes)
	if err != nil {
		return in, err
	}
	return s.syncDueIndex(ctx, in)
}

// List returns every instance, ordered by name then tenant. It scans: an operator's command,
// never on the firing path.
func (s *Store) List(ctx context.Context) ([]timer.Instance, error) {
	items, err := scanTimers[instanceItem](ctx, s, expression.Name("kind").Equal(expression.Value("instance")), "timers")
	if err != nil {
		return nil, err
	}
	out := make([]timer.Instance, 0, len(items))
	for _, it := range items {
		out = append(out, it.instance())
	}
	slices.SortFunc(out, func(a, b timer.Instance) int {
		return timer.CompareKeys(a.Key, b.Key)
	})
	return out, nil
}

// ScanInstances calls fn with every instance, a page of the scan at a time (admin.InstanceScanner):
// List's consistent scan without holding the table. fn may write the instances it is given.
func (s *Store) ScanInstances(ctx context.Context, fn func([]timer.Instance) error) error {
	expr, err := expression.NewBuilder().WithFilter(expression.Name("kind").Equal(expression.Value("instance"))).Build()
	if err != nil {
		return fmt.Errorf("build scan: %w", err)
	}
	p := dynamodb.NewScanPaginator(s.api, &dynamodb.ScanInput{
		TableName: &s.timers, FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list timers: %w", err)
		}
		var items []instanceItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return fmt.Errorf("decode timers: %w", err)
		}
		out := make([]timer.Instance, 0, len(items))
		for _, it := range items {
			out = append(out, it.instance())
		}
		if err := fn(out); err != nil {
			return err
		}
	}
	return nil
}

// Logs reads the execution log, newest first.
func (s *Store) Logs(ctx context.Context, q timer.LogQuery) ([]timer.Execution, error) {
	if q.Limit <= 0 {
		q.Limit = 50
	}
	if q.Before.IsZero() {
		q.Before = time.Now().Add(time.Minute)
	}
	before := q.Before.UTC().Format(logSortLayout)
	if q.Key != nil {
		kc := expression.Key("pk").Equal(expression.Value(q.Key.String())).And(expression.Key("sk").LessThan(expression.Value(before)))
		var filt *expression.ConditionBuilder
		if q.ErrorsOnly {
			f := expression.Name("outcome").NotEqual(expression.Value(string(timer.OutcomeSuccess))).
				And(expression.Name("outcome").NotEqual(expression.Value(string(timer.OutcomeWarnings))))
			filt = &f
		}
		return s.queryLog(ctx, kc, filt, q.Limit)
	}
	return s.allTimersLog(ctx, q.App, q.Tenant, q.ErrorsOnly, before, q.Days, q.Limit)
}

// queryLog reads one instance's log items (its partition), newest first, up to limit.
func (s *Store) queryLog(ctx context.Context, kc expression.KeyConditionBuilder, filt *expression.ConditionBuilder, limit int) ([]timer.Execution, error) {
	src, err := logSource[logItem](s, "", kc, filt, int32(min(limit, 1000)))
	if err != nil {
		return nil, err
	}
	return takeEntries(ctx, &merge[logItem]{srcs: []*source[logItem]{src}, key: func(it logItem) string { return it.SK }}, nil, limit)
}

// scanTimers reads every item of the timers table matching filt (strongly consistent,
// paginated), decoded as T. An operator's operation, never on the firing path.
func scanTimers[T any](ctx context.Context, s *Store, filt expression.ConditionBuilder, what string) ([]T, error) {
	expr, err := expression.NewBuilder().WithFilter(filt).Build()
	if err != nil {
		return nil, fmt.Errorf("build scan: %w", err)
	}
	p := dynamodb.NewScanPaginator(s.api, &dynamodb.ScanInput{
		TableName: &s.timers, FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	})
	return collect[T](ctx, p, func(o *dynamodb.ScanOutput) []map[string]types.AttributeValue { return o.Items }, what)
}

// queryPartition reads every item of one partition of the timers table (pk), consistently.
func queryPartition[T any](ctx context.Context, s *Store, pk, what string) ([]T, error) {
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key("pk").Equal(expression.Value(pk))).Build()
	if err != nil {
		return nil, fmt.Errorf("build query: %w", err)
	}
	p := dynamodb.NewQueryPaginator(s.api, &dynamodb.QueryInput{
		TableName: &s.timers, KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	})
	return collect[T](ctx, p, func(o *dynamodb.QueryOutput) []map[string]types.AttributeValue { return o.Items }, what)
}

// pager is the SDK's Scan and Query paginators.
type pager[O any] interface {
	HasMorePages() bool
	NextPage(ctx context.Context, opts ...func(*dynamodb.Options)) (O, error)
}

// collect reads every page and decodes its items as T.
func collect[T, O any](ctx context.Context, p pager[O], items func(O) []map[string]types.AttributeValue, what string) ([]T, error) {
	var out []T
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		var decoded []T
		if err := attributevalue.UnmarshalListOfMaps(items(page), &decoded); err != nil {
			return nil, fmt.Errorf("decode %s: %w", what, err)
		}
		out = append(out, decoded...)
	}
	return out, nil
}

// setCalendar writes the settings that came with business calendars, each attribute only
// when set (an item without them reads as a timer without a calendar or window).
func setCalendar(upd expression.UpdateBuilder, st timer.Settings) expression.UpdateBuilder {
	n := expression.Name
	setOrRemove := func(name string, set bool, v any) {
		if set {
			upd = upd.Set(n(name), expression.Value(v))
		} else {
			upd = upd.Remove(n(name))
		}
	}
	setOrRemove("calendar", st.Calendar != nil, st.Calendar)
	setOrRemove("onExcluded", st.OnExcluded != "", st.OnExcluded)
	setOrRemove("startAt", !st.Start.IsZero(), ms(st.Start))
	setOrRemove("endAt", !st.End.IsZero(), ms(st.End))
	setOrRemove("misfireAfterMs", st.MisfireAfter > 0, st.MisfireAfter.Milliseconds())
	return upd
}

// ResetState removes an idle instance's state (an operator's reset) with one conditional
// UpdateItem and returns the instance as it was: timer.ErrNotFound, or
// timer.ErrRunningState while an execution holds it. The last success is kept: the next
// run's window still starts there.
func (s *Store) ResetState(ctx context.Context, key timer.Key) (timer.Instance, error) {
	n := expression.Name
	cond := n("pk").AttributeExists().And(n("execId").AttributeNotExists())
	out, err := s.update(ctx, s.timers, instanceKey(key), expression.Remove(n("state")), &cond, types.ReturnValueAllOld)
	if isConditionFailed(err) {
		if old, ok := conditionOld(err); ok && len(old) > 0 {
			return timer.Instance{}, fmt.Errorf("reset the state of %s: %w", key, timer.ErrRunningState)
		}
		return timer.Instance{}, fmt.Errorf("%w: %s", timer.ErrNotFound, key)
	}
	if err != nil {
		return timer.Instance{}, fmt.Errorf("reset the state of %s: %w", key, err)
	}
	return decodeInstance(out.Attributes)
}

// RequestStop records a stop of the instance's running execution (by, at now) with one
// UpdateItem fenced on that execution (its id and version, which it keeps: the execution's
// own writes stay fenced) and on no stop requested yet, pulling its lease in
// (timer.Instance.RequestStop): timer.ErrNotFound, timer.ErrNotRunning, timer.ErrStopped
// (already requested). It returns the instance with the request.
func (s *Store) RequestStop(ctx context.Context, key timer.Key, by string, now time.Time) (timer.Instance, error) {
	for range 3 {
		in, err := s.Get(ctx, key)
		if err != nil {
			return timer.Instance{}, err
		}
		after, err := in.RequestStop(by, now)
		if err != nil {
			return timer.Instance{}, err
		}
		n := expression.Name
		cond := n("execId").Equal(expression.Value(in.ExecutionID)).
			And(n("version").Equal(expression.Value(in.Version))).
			And(n("stopAt").AttributeNotExists())
		upd := expression.Set(n("stopBy"), expression.Value(by)).
			Set(n("stopAt"), expression.Value(ms(now))).
			Set(n("leaseExpiresAt"), expression.Value(ms(after.LeaseExpiresAt)))
		out, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueAllNew)
		if isConditionFailed(err) {
			continue // it ended, or was stopped, since the read: read again and say which
		}
		if err != nil {
			return timer.Instance{}, fmt.Errorf("stop %s: %w", key, err)
		}
		return decodeInstance(out.Attributes)
	}
	return timer.Instance{}, fmt.Errorf("stop %s: %w", key, timer.ErrChanged)
}
