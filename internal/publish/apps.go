package publish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/timer"
)

// Resource types the publish function serves.
const (
	// PublishResourceType is Sundial's own stack's resource: it publishes the manifest
	// packaged with the function (app "default", or the manifest's app:).
	PublishResourceType = "Custom::SundialPublish"
	// TimersResourceType is declared in an application's own stack: its properties name the
	// app and carry the manifest (inline, Manifest) or point at it (ManifestS3).
	TimersResourceType = "Custom::SundialTimers"
)

// Properties of a Custom::SundialTimers resource.
const (
	PropApp        = "App"
	PropManifest   = "Manifest"   // the manifest inline: an object (timers: [...]) or a YAML string
	PropManifestS3 = "ManifestS3" // {Bucket, Key, Version (optional)}: a timers.yaml in S3
)

// AppPhysicalIDPrefix starts the physical id of an app's Custom::SundialTimers resource.
const AppPhysicalIDPrefix = "sundial-timers-"

// AppPhysicalID is the physical id of the app's Custom::SundialTimers resource: stable per app,
// so an Update that keeps App is a normal update. An Update that changes App answers with the
// new app's id; CloudFormation treats a changed physical id as a replacement and, once the
// stack update has succeeded (the cleanup phase), sends a Delete for the old id — which
// deactivates the old app's timers. Should the stack update fail instead, the rollback sends a
// Delete for the new id (the new app's timers are deactivated) and the old app's timers, never
// touched, stand. (CloudFormation custom resources, Update and Delete requests:
// "If the value returned is different, CloudFormation recognizes the update as a replacement
// and sends a delete request to the old resource.")
func AppPhysicalID(app string) string { return AppPhysicalIDPrefix + app }

// undoTimeout bounds undoing a failed request's claim of its app.
const undoTimeout = 5 * time.Second

// AppStacks ends an app's stack: admin.Service.DeleteAppStack (Handler.Apps replaces it in
// tests).
type AppStacks interface {
	DeleteAppStack(ctx context.Context, app, owner, resource string) (rep admin.SyncReport, owned bool, err error)
}

// ObjectGetter is the part of the S3 client that ManifestS3 needs (a fake in tests).
type ObjectGetter interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// handleApp serves Custom::SundialTimers: Create and Update publish the app's manifest (only
// that app's timers change), Delete deactivates the app's timers (history kept).
//
// Once per deploy, as for the packaged manifest, but keyed differently (AppDeployKey): the
// manifest is in the resource's properties, so every request CloudFormation sends carries
// the manifest it wants — a rollback sends the previous properties, and re-publishing them
// restores the previous timers. Only a resend of the same request (same request id: Lambda
// retrying the event) is skipped. Custom::SundialPublish cannot do that: its rollback runs
// the new package, whose manifest is not the previous one, so there a rollback publishes
// nothing.
//
// On failure the physical id is left empty: cfn.LambdaWrap answers with the request's (the
// request id on Create), so the Delete CloudFormation sends after a failed Create names an id
// that is not this app's and changes nothing.
func (h *Handler) handleApp(ctx context.Context, ev cfn.Event) (string, map[string]any, error) {
	log := h.Log.With("resource_type", ev.ResourceType, "request_type", ev.RequestType, "request_id", ev.RequestID,
		"stack", ev.StackID, "logical_id", ev.LogicalResourceID)
	if ev.RequestType == cfn.RequestDelete {
		return h.deleteApp(ctx, ev)
	}
	app, err := appProperty(ev.ResourceProperties)
	if err != nil {
		log.Error("publish: rejected; nothing changed", "error", err)
		return "", nil, reason(err)
	}
	deploy := AppDeployKey(app, ev)
	log = log.With("app", app, "deploy", deploy)
	m, err := h.appManifest(ctx, app, ev.ResourceProperties)
	if err != nil {
		log.Error("publish: manifest rejected; nothing changed", "error", err)
		return "", nil, reason(err)
	}
	// One stack owns an app: another stack's resource naming it fails, changing nothing. A
	// claim this request made is undone if the publish fails: the stack published nothing.
	_, claimed, err := h.Admin.ClaimApp(ctx, app, ev.StackID, ev.LogicalResourceID)
	if err != nil {
		log.Error("publish: rejected; nothing changed", "error", err)
		return "", nil, reason(err)
	}
	fail := func(err error) (string, map[string]any, error) {
		log.Error("publish failed", "error", err)
		if claimed {
			// Also when the request was stopped at its deadline (Responder): its context has
			// ended, and the claim must not outlive a failed Create.
			undo, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
			defer cancel()
			if uerr := h.Admin.UnclaimApp(undo, app, ev.StackID); uerr != nil {
				log.Error("publish: the app's new claim could not be undone; `sundial apps release` frees it", "error", uerr)
			}
		}
		return "", nil, reason(err)
	}
	done, err := h.Admin.Published(ctx, app, deploy)
	if err != nil {
		return fail(err)
	}
	if done {
		log.Info("publish: this request was published before; nothing to do")
		return AppPhysicalID(app), map[string]any{"App": app, "AlreadyPublished": true}, nil
	}
	// When Published wakes for properties this resource never published: a rollback's Update
	// carries the previous properties (already published by the deploy it returns to), so it
	// restores the previous timers and wakes nothing; a failed deploy is not a publish.
	props := AppPropertiesKey(app, ev)
	seen, err := h.Admin.Published(ctx, app, props)
	if err != nil {
		return fail(err)
	}
	wake := deploy
	if seen {
		wake = ""
		log.Info("publish: these properties were published before (a rollback, or a deploy back to them): When Published timers are not woken")
	}
	rep, err := h.ops().Publish(ctx, stackActor(ev), m, wake)
	if err != nil {
		return fail(err)
	}
	if err := h.Admin.MarkPublished(ctx, app, props); err != nil {
		return fail(err)
	}
	if err := h.Admin.MarkPublished(ctx, app, deploy); err != nil {
		return fail(err)
	}
	log.Info("published", append(ReportAttrs(rep), "republished", seen)...)
	return AppPhysicalID(app), map[string]any{
		"App": app, "Created": len(rep.Created), "Updated": len(rep.Updated), "Unchanged": len(rep.Unchanged),
		"Deactivated": len(rep.Deactivated), "Kept": len(rep.Kept), "Woken": len(rep.Woken),
	}, nil
}

// deleteApp deactivates the timers of the app the physical id names — only an id this handler
// answered with (sundial-timers-<app>). After a replacement (App changed) the Delete names the
// old id, which is the old app's, whatever the properties say; after a failed Create it names
// the request id, which is no app's, and nothing changes.
func (h *Handler) deleteApp(ctx context.Context, ev cfn.Event) (string, map[string]any, error) {
	log := h.Log.With("resource_type", ev.ResourceType, "request_type", ev.RequestType, "request_id", ev.RequestID,
		"stack", ev.StackID, "physical_id", ev.PhysicalResourceID)
	app, ok := strings.CutPrefix(ev.PhysicalResourceID, AppPhysicalIDPrefix)
	if !ok || !timer.ValidName(app) || app == timer.DefaultApp {
		log.Info("publish: delete of a resource that published nothing (a failed create); nothing to do")
		return ev.PhysicalResourceID, nil, nil
	}
	var apps AppStacks = h.Admin
	if h.Apps != nil {
		apps = h.Apps
	}
	rep, owned, err := h.ops().Unpublish(ctx, stackActor(ev), apps, app, ev.StackID, ev.LogicalResourceID)
	if err != nil {
		log.Error("publish: deactivating the app's timers failed", "app", app, "error", err)
		return "", nil, reason(err)
	}
	if !owned {
		log.Warn("publish: another stack, or another resource of this stack, publishes the app now; its timers are left alone", "app", app)
		return ev.PhysicalResourceID, map[string]any{"App": app, "Owned": false}, nil
	}
	log.Info("publish: the app's timers are deactivated (history kept), and the app released", "app", app, "deactivated", rep.Deactivated)
	return ev.PhysicalResourceID, map[string]any{"App": app}, nil
}

// appProperty reads App. An app's stack may not claim timer.DefaultApp, Sundial's own stack's
// (deleting that stack would deactivate Sundial's own timers).
func appProperty(props map[string]any) (string, error) {
	app, _ := props[PropApp].(string)
	switch {
	case app == "":
		return "", fmt.Errorf("%w: %s: required (the app whose timers this resource publishes)", errkind.Invalid, PropApp)
	case !timer.ValidName(app):
		return "", fmt.Errorf("%w: %s: %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, PropApp, app)
	case app == timer.DefaultApp:
		return "", fmt.Errorf("%w: %s: %q is the app of Sundial's own stack; name your app", errkind.Invalid, PropApp, app)
	}
	return app, nil
}

// appManifest reads the resource's manifest (Manifest or ManifestS3, exactly one), validates
// it as `sundial sync` does, and makes it the app's: a manifest without app: takes App, one
// that names another app is rejected.
func (h *Handler) appManifest(ctx context.Context, app string, props map[string]any) (manifest.Manifest, error) {
	inline, hasInline := props[PropManifest]
	loc, hasS3 := props[PropManifestS3]
	var (
		m   manifest.Manifest
		err error
	)
	switch {
	case hasInline && hasS3:
		return m, fmt.Errorf("%w: give %s or %s, not both", errkind.Invalid, PropManifest, PropManifestS3)
	case hasInline:
		m, err = InlineManifest(inline)
		if err != nil {
			return m, fmt.Errorf("%s: %w", PropManifest, err)
		}
	case hasS3:
		m, err = h.s3Manifest(ctx, loc)
		if err != nil {
			return m, err
		}
	default:
		return m, fmt.Errorf("%w: %s (the timers inline) or %s (a timers.yaml in S3) is required", errkind.Invalid, PropManifest, PropManifestS3)
	}
	if w := m.WrittenApp(); w != "" && w != app {
		return m, fmt.Errorf("%w: the manifest names app %q, but the resource's %s is %q", errkind.Invalid, w, PropApp, app)
	}
	m.App = app
	return m, nil
}

// InlineManifest decodes the Manifest property. CloudFormation passes every scalar of a
// resource's properties as a string ("2", "false"), so an object is rebuilt as a YAML document
// whose scalars are plain (untagged): YAML resolves them as a timers.yaml would — priority:
// "2" is the number 2, active: "false" the boolean, schedule: "every 1h" a string — and the
// manifest is parsed strictly and validated as a file is. A string is the manifest's YAML text.
func InlineManifest(v any) (manifest.Manifest, error) {
	var doc []byte
	switch v := v.(type) {
	case string:
		doc = []byte(v)
	case map[string]any:
		n, err := plainNode(v)
		if err != nil {
			return manifest.Manifest{}, err
		}
		if doc, err = yaml.Marshal(n); err != nil {
			return manifest.Manifest{}, fmt.Errorf("%w: %v", errkind.Invalid, err)
		}
		m, err := manifest.Parse(bytes.NewReader(doc))
		if err != nil && !errors.Is(err, errkind.Invalid) {
			return m, err
		}
		if err != nil && m.Timers == nil {
			// The document did not decode (a value of the wrong type, an unknown field): its
			// line numbers are of the rebuilt document, so name the timer and field instead.
			if located := locateDecodeErrors(v); located != nil {
				return m, located
			}
		}
		return m, err
	default:
		return manifest.Manifest{}, fmt.Errorf("%w: want an object (timers: [...]) or a YAML string, got %T", errkind.Invalid, v)
	}
	return manifest.Parse(bytes.NewReader(doc))
}

var yamlErrPrefix = regexp.MustCompile(`^yaml: (unmarshal errors:\s*)?(line \d+: )?`)

// locateDecodeErrors decodes each top-level field and each timer's fields alone, and reports
// those that do not decode as "timers[i] "Name": field: problem".
func locateDecodeErrors(obj map[string]any) error {
	var errs []error
	decodeOne := func(key string, val any, into any) error {
		n, err := plainNode(map[string]any{key: val})
		if err != nil {
			return err
		}
		doc, err := yaml.Marshal(n)
		if err != nil {
			return err
		}
		dec := yaml.NewDecoder(bytes.NewReader(doc))
		dec.KnownFields(true)
		if err := dec.Decode(into); err != nil {
			if strings.Contains(err.Error(), "not found in type") {
				return errors.New("unknown field")
			}
			return errors.New(strings.TrimSpace(yamlErrPrefix.ReplaceAllString(err.Error(), "")))
		}
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if k == "timers" {
			continue
		}
		if err := decodeOne(k, obj[k], &manifest.Manifest{}); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %v", errkind.Invalid, k, err))
		}
	}
	timers, _ := obj["timers"].([]any)
	for i, t := range timers {
		tm, ok := t.(map[string]any)
		if !ok {
			continue
		}
		where := fmt.Sprintf("timers[%d]", i)
		if name, _ := tm["name"].(string); name != "" {
			where += fmt.Sprintf(" %q", name)
		}
		for _, k := range slices.Sorted(maps.Keys(tm)) {
			if err := decodeOne(k, tm[k], &manifest.Timer{}); err != nil {
				errs = append(errs, fmt.Errorf("%w: %s: %s: %v", errkind.Invalid, where, k, err))
			}
		}
	}
	return errors.Join(errs...)
}

// plainNode turns a decoded JSON value into a YAML node with untagged, plain scalars.
func plainNode(v any) (*yaml.Node, error) {
	switch v := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			val, err := plainNode(v[k])
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, val)
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range v {
			val, err := plainNode(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, val)
		}
		return n, nil
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: v}, nil
	case float64: // a JSON number (not from CloudFormation, which sends strings)
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(v, 'f', -1, 64)}, nil
	case json.Number:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: v.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatBool(v)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	default:
		return nil, fmt.Errorf("%w: unexpected %T in the manifest", errkind.Invalid, v)
	}
}

// s3Manifest fetches ManifestS3: {Bucket, Key, Version}; Version (an S3 object version id) is
// optional, and pinning it makes a new upload a property change — and so an Update and a
// publish. The publish function's role needs s3:GetObject on the object (template.yaml's
// ManifestBucketArns parameter).
func (h *Handler) s3Manifest(ctx context.Context, loc any) (manifest.Manifest, error) {
	obj, _ := loc.(map[string]any)
	bucket, _ := obj["Bucket"].(string)
	key, _ := obj["Key"].(string)
	version, _ := obj["Version"].(string)
	if bucket == "" || key == "" {
		return manifest.Manifest{}, fmt.Errorf("%w: %s: want {Bucket, Key, Version (optional)}", errkind.Invalid, PropManifestS3)
	}
	where := "s3://" + bucket + "/" + key
	if version != "" {
		where += "?versionId=" + version
	}
	if h.S3 == nil {
		return manifest.Manifest{}, fmt.Errorf("%s: %s: this publish function has no S3 client", PropManifestS3, where)
	}
	in := &s3.GetObjectInput{Bucket: &bucket, Key: &key}
	if version != "" {
		in.VersionId = &version
	}
	out, err := h.S3.GetObject(ctx, in)
	if err != nil {
		return manifest.Manifest{}, fmt.Errorf("%s: %s: %w", PropManifestS3, where, err)
	}
	defer out.Body.Close()
	m, err := manifest.Parse(io.LimitReader(out.Body, manifest.MaxFileBytes+1))
	if err != nil {
		return manifest.Manifest{}, fmt.Errorf("%s: %s: %w", PropManifestS3, where, err)
	}
	return m, nil
}

// AppDeployKey names one publish of an app's resource: the app, the stack and logical id,
// the request id and the properties. A resend of the same request has the same key (and is
// not published twice); any other request — an Update with changed properties, a rollback's
// Update back to the previous ones — is a new key and publishes.
func AppDeployKey(app string, ev cfn.Event) string {
	props, _ := json.Marshal(ev.ResourceProperties) // map keys sorted: canonical
	h := sha256.New()
	for _, s := range []string{app, ev.StackID, ev.LogicalResourceID, ev.RequestID, string(props)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "app-" + app + "-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// AppPropertiesKey names what a Custom::SundialTimers request publishes, whatever the request:
// the app, the stack, the resource and its properties. When Published timers wake only for a
// key not published before, so a rollback (an Update back to properties that were published)
// wakes nothing. ServiceToken and ServiceTimeout are left out: they do not change what is
// published.
func AppPropertiesKey(app string, ev cfn.Event) string {
	props := maps.Clone(ev.ResourceProperties)
	delete(props, "ServiceToken")
	delete(props, "ServiceTimeout")
	b, _ := json.Marshal(props) // map keys sorted: canonical
	h := sha256.New()
	for _, s := range []string{app, ev.StackID, ev.LogicalResourceID, string(b)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "props-" + app + "-" + hex.EncodeToString(h.Sum(nil)[:12])
}
