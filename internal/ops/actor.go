// Package ops is Sundial's one operations layer: every operator action — the console's pages
// and API, the CLI, the public client, the publish custom resource, `sundial sync`, the
// platform's own resumes — is one method of Service that takes the caller (an Actor),
// validates, applies (through internal/admin and the store) and writes its audit record
// itself, exactly once. Table lists every operation with its HTTP route, the IAM action a
// caller needs and the audit action it records; the console's API routes, the local gate,
// api/openapi.yaml and the template's exported policies are built from it or checked
// against it (tests).
package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/sundialhq/sundial/internal/errkind"
)

// Kind is what sort of caller an Actor is.
type Kind string

// The kinds of actor.
const (
	// IAM is an IAM principal: the API behind API Gateway (the caller's ARN), a request
	// signed with an operator's keys, or the public client (its AWS identity).
	IAM Kind = "iam"
	// Operator is a console operator: the console's token or session, or an operator named
	// in the local operators file.
	Operator Kind = "operator"
	// CLI is a person running the CLI against the tables ("cli:USER").
	CLI Kind = "cli"
	// Stack is a CloudFormation stack publishing its timers (its stack id).
	Stack Kind = "stack"
	// Platform is Sundial itself (a pause that ended, a pause after failures).
	Platform Kind = "platform"
)

// Actor is who asks for an operation: its kind and its identity, as the audit record's
// "who" names it.
type Actor struct {
	Kind Kind
	Name string
}

// The platform acting on its own.
var PlatformActor = Actor{Kind: Platform, Name: "platform"}

// ClientName is the public client's name when its AWS identity is unknown.
const ClientName = "client"

// Validate refuses an actor no record could name.
func (a Actor) Validate() error {
	switch a.Kind {
	case IAM, Operator, CLI, Stack, Platform:
	default:
		return fmt.Errorf("%w: actor kind %q (want iam, operator, cli, stack or platform)", errkind.Invalid, a.Kind)
	}
	if a.Name == "" {
		return fmt.Errorf("%w: a %s actor needs a name: every audit record names who acted", errkind.Invalid, a.Kind)
	}
	return nil
}

// String is the actor as the audit record's "who".
func (a Actor) String() string { return a.Name }

type actorKey struct{}

// WithActor is ctx acting for a: the console's handlers set it from the authenticated
// caller, so that console.Backend's methods (which take a who string) act for the caller's
// actor.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorOf is the actor ctx acts for; ok is false when none was set.
func ActorOf(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}

// ActorFor is ctx's actor when it names who (or who is ""), else who as a console.Backend
// method called with a who and no actor in its context names it: a CLI user ("cli:USER", the
// CLI's own name for itself) or a console operator.
func ActorFor(ctx context.Context, who string) Actor {
	if a, ok := ActorOf(ctx); ok && (who == "" || who == a.Name) {
		return a
	}
	if strings.HasPrefix(who, "cli:") {
		return Actor{Kind: CLI, Name: who}
	}
	return Actor{Kind: Operator, Name: who}
}
