// Package publish is the publish function: a CloudFormation custom resource that, on every
// deploy of the stack, syncs the app's timers.yaml (packaged with the function) into the
// timers table — the OutSystems publish of a module's timers — and wakes its When Published
// timers once. The same function serves Custom::SundialTimers, declared in an application's
// own stack with the app's manifest in its properties (apps.go).
package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/ops/apply"
)

// PhysicalID names the custom resource; it never changes, so an update never makes
// CloudFormation delete the "old" resource.
const PhysicalID = "sundial-timers"

// MaxReason bounds a failure reason as the handler words it; the whole error is in the
// function's log. The answer as sent is fitted to CloudFormation's 4,096 bytes, JSON escapes
// counted, by FitResponse (Responder).
const MaxReason = 1800

// ManifestPath is where the manifest is: SUNDIAL_MANIFEST, else timers.yaml in the function's
// package (LAMBDA_TASK_ROOT), where `make build-PublishFunction` puts it.
func ManifestPath(getenv func(string) string) string {
	if p := getenv("SUNDIAL_MANIFEST"); p != "" {
		return p
	}
	root := getenv("LAMBDA_TASK_ROOT")
	if root == "" {
		root = "."
	}
	return filepath.Join(root, "timers.yaml")
}

// Handler handles the custom resource's requests.
type Handler struct {
	Admin    *admin.Service
	Manifest string
	Log      *slog.Logger
	// Apps ends an app's stack when its Custom::SundialTimers is deleted (the app's timers
	// deactivated, the app released); nil uses Admin.
	Apps AppStacks
	// S3 fetches a Custom::SundialTimers' ManifestS3 (nil: ManifestS3 fails the request).
	S3 ObjectGetter
	// Ops publishes and unpublishes, each recorded in the audit trail as the stack's
	// (internal/ops); nil: an operations layer on Admin that records nothing (tests).
	Ops *apply.Service
}

// ops is the operations layer the handler's publishes go through.
func (h *Handler) ops() *apply.Service {
	if h.Ops != nil {
		return h.Ops
	}
	return &apply.Service{Admin: h.Admin, Store: h.Admin.Store, Clock: h.Admin.Clock}
}

// stackActor is the stack a request comes from, as the audit trail names it (its stack id).
func stackActor(ev cfn.Event) ops.Actor {
	if ev.StackID == "" {
		return ops.Actor{Kind: ops.Stack, Name: "stack"}
	}
	return ops.Actor{Kind: ops.Stack, Name: ev.StackID}
}

// Handle serves Custom::SundialTimers (an app's own stack: handleApp) and, for any other type,
// Sundial's own Custom::SundialPublish: it publishes the packaged manifest on Create and Update, once per deploy (DeployKey): a request
// for a deploy already published changes nothing. An invalid manifest fails the request — and so the deploy, which rolls
// back — with a reason that names the timer and the field; nothing is changed. Delete does
// nothing: the tables go with the stack (or are retained with their history).
func (h *Handler) Handle(ctx context.Context, ev cfn.Event) (string, map[string]any, error) {
	if ev.ResourceType == TimersResourceType {
		return h.handleApp(ctx, ev)
	}
	log := h.Log.With("request_type", ev.RequestType, "request_id", ev.RequestID, "stack", ev.StackID)
	if ev.RequestType == cfn.RequestDelete {
		log.Info("publish: delete; the timers stay with the tables")
		return PhysicalID, nil, nil
	}
	deploy := DeployKey(ev)
	log = log.With("deploy", deploy)
	done, err := h.Admin.Store.Published(ctx, deploy)
	if err != nil {
		return PhysicalID, nil, reason(err)
	}
	if done {
		// A rollback to the previous deploy's properties (its package may be gone: the
		// function runs the new one), or a retry: that deploy's publish stands.
		log.Info("publish: this deploy was published before; nothing to do")
		return PhysicalID, map[string]any{"AlreadyPublished": true}, nil
	}
	m, err := manifest.Load(h.Manifest)
	if err != nil {
		log.Error("publish: manifest rejected; nothing changed", "error", err)
		return PhysicalID, nil, reason(err)
	}
	rep, err := h.ops().Publish(ctx, stackActor(ev), m, deploy)
	if err != nil {
		log.Error("publish failed", "error", err)
		return PhysicalID, nil, reason(err)
	}
	if err := h.Admin.Store.MarkPublished(ctx, deploy, h.Admin.Clock.Now()); err != nil {
		return PhysicalID, nil, reason(err)
	}
	log.Info("published", ReportAttrs(rep)...)
	return PhysicalID, map[string]any{
		"Created": len(rep.Created), "Updated": len(rep.Updated), "Unchanged": len(rep.Unchanged),
		"Deactivated": len(rep.Deactivated), "Kept": len(rep.Kept), "Woken": len(rep.Woken),
	}, nil
}

// DeployKey names the deploy a request is for: the resource's properties (the publish
// function's version and DeployId, which change with each deploy) when it has them, else the
// request id. A rollback sends the previous deploy's properties, and so its key.
func DeployKey(ev cfn.Event) string {
	v, _ := ev.ResourceProperties["FunctionVersion"].(string)
	d, _ := ev.ResourceProperties["DeployId"].(string)
	if v == "" && d == "" {
		return "request-" + ev.RequestID
	}
	sum := sha256.Sum256([]byte(v + "\x00" + d))
	return "deploy-" + hex.EncodeToString(sum[:12])
}

// LogSample is how many names of each of a report's lists the "published" log line carries.
const LogSample = 10

// ReportAttrs summarises a publish's report for the function's log: each list's count and
// its first LogSample names (the line listed every name: 659 KB for 50,000 instances, built
// whole in the function's memory). The CLI's sync and the audit trail have the counts too.
func ReportAttrs(rep admin.SyncReport) []any {
	list := func(key string, names []string) any {
		return slog.Group(key, "count", len(names), "sample", names[:min(len(names), LogSample)])
	}
	return []any{list("created", rep.Created), list("updated", rep.Updated), list("unchanged", rep.Unchanged),
		list("deactivated", rep.Deactivated), list("kept", rep.Kept), list("woken", rep.Woken),
		list("tenants_added", rep.TenantsAdded), list("tenants_removed", rep.TenantsRemoved)}
}

func reason(err error) error {
	msg := err.Error()
	if len(msg) <= MaxReason {
		return fmt.Errorf("sundial publish: %s", msg)
	}
	cut := MaxReason
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Errorf("sundial publish: %s … (truncated; the publish function's log has the whole message)", msg[:cut])
}
