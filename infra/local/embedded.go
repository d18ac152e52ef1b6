package local

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/sundialhq/sundial/infra/localaws"
	"github.com/sundialhq/sundial/infra/provision"
	"github.com/sundialhq/sundial/internal/config"
)

// upEmbedded starts the embedded AWS (infra/localaws): the engines and the endpoint in front
// of them, with the stack provisioned from the template's SAM translation.
func (p *Platform) upEmbedded(ctx context.Context, o Options) error {
	body, err := o.templateBody()
	if err != nil {
		return err
	}
	sup := o.Supervision
	sup.Report = p.engineEvent
	env, err := localaws.Start(ctx, localaws.Options{Template: body, DBPath: o.DataDir, Log: o.Log, Listen: o.Listen, Replica: o.Replica,
		Supervise: &sup})
	if err != nil {
		return err
	}
	p.Local, p.Endpoint, p.AWS = env, env.Endpoint, env.Operator()
	env.Gateway.SetEvents(p.events.event)
	env.Gateway.SetEventsFault(o.EventsFault)
	env.Gateway.SetSNS(p.events.sns)
	if p.Stack, err = env.Provision(ctx, o.Stack, o.Params); err != nil {
		return fmt.Errorf("create the stack's resources from the template's SAM translation: %w", err)
	}
	p.Outputs, err = localaws.Outputs(p.Stack)
	return err
}

// functionsFromStack configures each function from the stack's SAM translation: its
// environment, timeout, memory, schedule, event sources and role; and the API function's
// role and environment.
func (p *Platform) functionsFromStack(o Options, local map[string]string) error {
	p.funcs = map[string]*function{}
	for name, id := range logicalIDs {
		f, err := p.functionFromStack(o, local, name, id)
		if err != nil {
			return err
		}
		p.funcs[name] = f
	}
	if err := p.checkFunctions(p.Stack.Functions); err != nil {
		return err
	}
	return p.apiFromStack(o, local)
}

// functionFromStack is the function name (logical ID id) as the translation gives it.
func (p *Platform) functionFromStack(o Options, local map[string]string, name, id string) (*function, error) {
	fn := p.Stack.Functions[id]
	if fn == nil {
		return nil, fmt.Errorf("the template has no function %s", id)
	}
	f, err := newFunction(name, fn, withLocalSettings(fn.Env, o, local), o)
	if err != nil {
		return nil, err
	}
	f.arn = fn.Arn
	if f.aws, err = p.Local.Config(o.Stack, id); err != nil {
		return nil, err
	}
	return f, nil
}

// newFunction is the function name as the translation gives it (fn), with the environment env.
func newFunction(name string, fn *provision.Function, env map[string]string, o Options) (*function, error) {
	f := &function{name: name, timeout: fn.Timeout, memoryMB: fn.MemoryMB, reserved: fn.ReservedConcurrency, sources: fn.EventSources,
		streams: fn.StreamSources, env: env, recursiveLoop: fn.RecursiveLoop}
	for _, s := range fn.Schedules {
		if s.Enabled && s.Every > 0 {
			f.every = s.Every
		}
	}
	if o.Tick > 0 && f.every > 0 {
		f.every = o.Tick
	}
	var err error
	if f.cfg, err = config.FromEnv(func(k string) string { return f.env[k] }); err != nil {
		return nil, fmt.Errorf("%s's environment: %w", fn.LogicalID, err)
	}
	return f, nil
}

// checkFunctions says what the template gives the functions that the platform cannot run.
func (p *Platform) checkFunctions(translated map[string]*provision.Function) error {
	if p.funcs[FnFetch].every == 0 || p.funcs[FnRecovery].every == 0 {
		return errors.New("the template's fetch and recovery functions need a rate() schedule")
	}
	if len(p.funcs[FnProcessor].sources) == 0 {
		return errors.New("the template's processor function has no SQS event source")
	}
	for _, id := range slices.Sorted(maps.Keys(translated)) {
		if fn := translated[id]; len(fn.StreamSources) > 0 && !slices.Contains(slices.Collect(maps.Values(logicalIDs)), id) {
			return fmt.Errorf("the template gives %s a DynamoDB stream event source, but the local platform runs only %v", id, slices.Sorted(maps.Values(logicalIDs)))
		}
	}
	return nil
}

// apiFromStack configures the API function (Service Center's): its role and environment.
func (p *Platform) apiFromStack(o Options, local map[string]string) error {
	p.APIAWS = p.AWS // the template may leave Service Center out (ServiceCenter=false)
	fn := p.Stack.Functions[apiFunction]
	if fn == nil {
		return nil
	}
	var err error
	if p.APIAWS, err = p.Local.Config(o.Stack, apiFunction); err != nil {
		return err
	}
	// Its own environment: it audits through the writer (SUNDIAL_AUDIT_WRITER).
	apiEnv := withLocalSettings(fn.Env, o, local)
	cfg, err := config.FromEnv(func(k string) string { return apiEnv[k] })
	if err != nil {
		return fmt.Errorf("%s's environment: %w", apiFunction, err)
	}
	p.apiCfg = &cfg
	return nil
}
