package lambdarun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Lambda's recursive loop detection (https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html):
// Lambda tracks an event chain through the X-Ray trace header. Each invocation's trace header
// (Lambda-Runtime-Trace-Id, which aws-lambda-go sets as _X_AMZN_TRACE_ID) carries a Lineage
// field counting how many times the chain has invoked the function; aws-sdk-go-v2's recursion
// detection middleware sends that header with every call (X-Amzn-Trace-Id), SQS keeps it as the
// message's AWSTraceHeader system attribute, and the SQS event source mapping derives the next
// invocation's header from it. When the chain would invoke a function a 17th time and the
// function's RecursiveLoop is not Allow, Lambda stops the invocation.
//
// AWS does not document the Lineage field's encoding. Here it is a list of entries
// "<function>:<count>" joined by '|', <function> eight hex digits naming the function (FNV-32a
// of its ARN): one chain can pass through several functions, and each counts its own
// invocations, as the documentation describes ("the number of times that the event has invoked
// the function"). A leading version field ("<v>:<function>:<count>") is accepted when read.

// RecursionLimit is how many invocations of one function one chain may make: Lambda stops the
// next (the 17th).
const RecursionLimit = 16

// RecursiveLoopAllow is the RecursiveLoop setting that turns the detection off for a function.
const RecursiveLoopAllow = "Allow"

// TraceHeader is an X-Ray trace header: Root, Parent, Sampled and Lineage, in that order, and
// any other fields kept as they came.
type TraceHeader struct {
	Root, Parent, Sampled string
	Lineage               Lineage
	Other                 []string // "Key=value" fields other than the four above (Self is dropped)
}

// Lineage counts, per function, the invocations of one chain.
type Lineage map[string]int

// ParseTraceHeader reads a trace header as AWSTraceHeader or X-Amzn-Trace-Id carries it
// (percent-encoded or not). A malformed Lineage is an error; the other fields are kept as they
// are.
func ParseTraceHeader(s string) (TraceHeader, error) {
	var h TraceHeader
	for part := range strings.SplitSeq(strings.TrimSpace(s), ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return h, fmt.Errorf("trace header %q: field %q is not Key=value", s, part)
		}
		switch k {
		case "Root":
			h.Root = v
		case "Parent":
			h.Parent = v
		case "Sampled":
			h.Sampled = v
		case "Lineage":
			l, err := ParseLineage(v)
			if err != nil {
				return h, fmt.Errorf("trace header %q: %w", s, err)
			}
			h.Lineage = l
		case "Self": // a load balancer's; not propagated
		default:
			h.Other = append(h.Other, part)
		}
	}
	return h, nil
}

// ParseLineage reads a Lineage field's value.
func ParseLineage(v string) (Lineage, error) {
	l := Lineage{}
	if v == "" {
		return l, nil
	}
	for entry := range strings.SplitSeq(v, "|") {
		f := strings.Split(entry, ":")
		if len(f) == 3 { // a version field first
			f = f[1:]
		}
		if len(f) != 2 || f[0] == "" {
			return nil, fmt.Errorf("lineage entry %q: want <function>:<count>", entry)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("lineage entry %q: count %q is not a whole number", entry, f[1])
		}
		l[f[0]] = max(l[f[0]], n)
	}
	return l, nil
}

// String encodes the lineage, its entries sorted.
func (l Lineage) String() string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(l)) {
		if i > 0 {
			b.WriteByte('|')
		}
		fmt.Fprintf(&b, "%s:%d", k, l[k])
	}
	return b.String()
}

// String encodes the header as Lambda passes it.
func (h TraceHeader) String() string {
	var parts []string
	for _, kv := range [][2]string{{"Root", h.Root}, {"Parent", h.Parent}, {"Sampled", h.Sampled}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	if len(h.Lineage) > 0 {
		parts = append(parts, "Lineage="+h.Lineage.String())
	}
	return strings.Join(append(parts, h.Other...), ";")
}

// LineageKey names a function in a Lineage field.
func LineageKey(functionArn string) string {
	f := fnv.New32a()
	_, _ = f.Write([]byte(functionArn))
	return fmt.Sprintf("%08x", f.Sum32())
}

// ErrRecursiveLoop: the invocation would exceed RecursionLimit for the function.
var ErrRecursiveLoop = errors.New("recursive loop detected")

// NextInvocation is the trace header of the invocation that the triggering messages' trace
// headers (AWSTraceHeader, "" for none) cause: the first message's Root (a new one if none has
// one), a new Parent, Sampled=0 (there is no X-Ray here), and the messages' lineages merged
// (the highest count per function) with the function's own count incremented. Count is that
// count; past RecursionLimit the error wraps ErrRecursiveLoop. A malformed header counts as
// none (AWS would not stop an invocation over it) and is reported in Malformed.
func NextInvocation(key string, parents []string) (next TraceHeader, count int, malformed []error, err error) {
	merged := Lineage{}
	for _, p := range parents {
		if p == "" {
			continue
		}
		h, perr := ParseTraceHeader(p)
		if perr != nil {
			malformed = append(malformed, perr)
			continue
		}
		if next.Root == "" {
			next.Root = h.Root
		}
		for k, n := range h.Lineage {
			merged[k] = max(merged[k], n)
		}
	}
	if next.Root == "" {
		next.Root = newRoot()
	}
	next.Parent, next.Sampled = randomHex(8), "0"
	merged[key]++
	next.Lineage, count = merged, merged[key]
	if count > RecursionLimit {
		err = fmt.Errorf("%w: this chain would invoke the function a %s time (Lambda stops it past %d unless RecursiveLoop is Allow)",
			ErrRecursiveLoop, ordinal(count), RecursionLimit)
	}
	return next, count, malformed, err
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// traceID is a fresh X-Ray trace header, as Lambda passes it to an invocation no traced event
// caused (not sampled: there is no X-Ray here).
func traceID() string {
	return TraceHeader{Root: newRoot(), Parent: randomHex(8), Sampled: "0"}.String()
}

func newRoot() string {
	return fmt.Sprintf("1-%08x-%s", time.Now().Unix(), randomHex(12))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type traceKey struct{}

// WithTrace gives an invocation its trace header: Invoke passes it to the function, a process
// function as Lambda-Runtime-Trace-Id (aws-lambda-go sets _X_AMZN_TRACE_ID from it), an
// in-process one in its context (see AddTraceHeader).
func WithTrace(ctx context.Context, header string) context.Context {
	return context.WithValue(ctx, traceKey{}, header)
}

// Trace is the trace header WithTrace gave ctx, "" if none.
func Trace(ctx context.Context) string {
	h, _ := ctx.Value(traceKey{}).(string)
	return h
}

// AddTraceHeader is an aws.Config APIOptions entry for handlers run in this process (Function):
// it sends the invocation's trace header (Trace(ctx)) as X-Amzn-Trace-Id, as aws-sdk-go-v2's
// recursion detection middleware sends _X_AMZN_TRACE_ID inside Lambda — a process-wide
// variable that functions sharing this process cannot each set.
func AddTraceHeader(stack *middleware.Stack) error {
	return stack.Build.Add(middleware.BuildMiddlewareFunc("SundialInProcessTraceHeader",
		func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
			if req, ok := in.Request.(*smithyhttp.Request); ok && req.Header.Get("X-Amzn-Trace-Id") == "" {
				if h := Trace(ctx); h != "" {
					req.Header.Set("X-Amzn-Trace-Id", h)
				}
			}
			return next.HandleBuild(ctx, in)
		}), middleware.After)
}
