package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/sundialhq/sundial/infra/iam"
)

// What the endpoint checks before a request reaches an engine, in this order:
//
//  1. it is addressed to the endpoint (its Host is one of the endpoint's own addresses, so
//     a DNS-rebound name cannot reach it) and does not come from a web page (no Origin, no
//     Sec-Fetch-Site other than "none");
//  2. it is signed (SigV4, Authorization header) with an access key ID the endpoint knows,
//     for the platform's region, and carries no session token (the platform issues none:
//     scope);
//  3. its body is within the service's own request limit; it is read holding the endpoint's
//     budget for what has arrived, at a minimum rate (bodies.go);
//  4. the signature is the one the key's secret gives for the request (recomputed with the
//     SDK's signer), within 15 minutes of its X-Amz-Date;
//  5. the key's principal may make the call (infra/iam, reading the body as the engine will).

// Request size limits, the services' own (the endpoint reads no more).
const (
	// dynamoMaxRequest: "A single call to BatchWriteItem can transmit up to 16MB of data over
	// the network" (DynamoDB API reference), the largest DynamoDB request.
	dynamoMaxRequest = 16 << 20
	// sqsMaxRequest: SQS takes up to 1 MiB of messages per request (a message or a batch);
	// the JSON around them (attributes, escapes) is bounded at as much again.
	sqsMaxRequest = 2 << 20
	// lambdaMaxSync and lambdaMaxEvent: Invoke's request payload (6 MB synchronous, 1 MiB
	// Event), as infra/lambdarun's Invoke API.
	lambdaMaxSync  = 6 * 1024 * 1024
	lambdaMaxEvent = 1024 * 1024
	// queryMaxRequest: a Query-protocol form (CloudFormation's DescribeStacks, SNS Publish of
	// a message of at most 256 KB).
	queryMaxRequest = 1 << 20
	// eventsMaxRequest: PutEvents' entries total at most 256 KB; the JSON around them
	// (escapes, names) is bounded at as much again.
	eventsMaxRequest = 512 << 10
	// minWeight is what every request counts against the in-flight budget at least.
	minWeight = 16 << 10
	// DefaultMaxInFlight bounds the bytes of request bodies held at once.
	DefaultMaxInFlight = 64 << 20
	// maxSkew: AWS refuses a signature more than 15 minutes from its time.
	maxSkew = 15 * time.Minute
)

// maxRequest is the largest body the service takes for the request.
func maxRequest(svc iam.Service, r *http.Request) int64 {
	switch svc {
	case iam.DynamoDB:
		return dynamoMaxRequest
	case iam.SQS:
		return sqsMaxRequest
	case iam.Lambda:
		if r.Header.Get("X-Amz-Invocation-Type") == "Event" {
			return lambdaMaxEvent
		}
		return lambdaMaxSync
	case iam.CloudFormation, iam.SNS:
		return queryMaxRequest
	case iam.Events:
		return eventsMaxRequest
	}
	return 0
}

// service names the service a request is for from its headers and path alone (before its
// body is read); "" for none.
func service(r *http.Request) iam.Service {
	target := r.Header.Get("X-Amz-Target")
	switch {
	case strings.HasPrefix(target, "DynamoDB_"), strings.HasPrefix(target, "DynamoDBStreams_"):
		return iam.DynamoDB
	case strings.HasPrefix(target, "AmazonSQS."):
		return iam.SQS
	case strings.HasPrefix(target, "AWSEvents."):
		return iam.Events
	case strings.HasPrefix(r.URL.Path, "/2015-03-31/functions/"):
		return iam.Lambda
	case target == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded"):
		// The Query protocol's services differ by the credential scope's service alone.
		if strings.Contains(r.Header.Get("Authorization"), "/sns/aws4_request") {
			return iam.SNS
		}
		return iam.CloudFormation
	}
	return ""
}

// signingName is the name a service's requests are signed for.
var signingName = map[iam.Service]string{iam.DynamoDB: "dynamodb", iam.SQS: "sqs", iam.Lambda: "lambda", iam.CloudFormation: "cloudformation",
	iam.Events: "events", iam.SNS: "sns"}

// ReportService is the signing name of the endpoint's own GET IAMReportPath.
const ReportService = "sundial"

// authHeader is a SigV4 Authorization header's parts.
type authHeader struct {
	keyID, date, region, service string
	signedHeaders                []string
	signature                    string
}

var errNoAuth = errors.New("Request is missing Authentication Token")

// parseAuthorization reads "AWS4-HMAC-SHA256 Credential=KEY/DATE/REGION/SERVICE/aws4_request,
// SignedHeaders=a;b, Signature=HEX".
func parseAuthorization(r *http.Request) (authHeader, error) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		if r.URL.Query().Has("X-Amz-Signature") {
			return authHeader{}, errors.New("presigned URLs are not accepted by the local endpoint: sign the Authorization header")
		}
		return authHeader{}, errNoAuth
	}
	if len(vals) > 1 {
		return authHeader{}, errors.New("the request has more than one Authorization header")
	}
	alg, rest, ok := strings.Cut(vals[0], " ")
	if !ok || alg != "AWS4-HMAC-SHA256" {
		return authHeader{}, errors.New("the Authorization header is not AWS4-HMAC-SHA256 (SigV4)")
	}
	var a authHeader
	seen := map[string]bool{}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || seen[k] {
			return authHeader{}, fmt.Errorf("the Authorization header's part %q does not read", part)
		}
		seen[k] = true
		switch k {
		case "Credential":
			f := strings.Split(v, "/")
			if len(f) != 5 || f[0] == "" || f[4] != "aws4_request" {
				return authHeader{}, fmt.Errorf("the Authorization header's Credential %q is not KEY/DATE/REGION/SERVICE/aws4_request", v)
			}
			a.keyID, a.date, a.region, a.service = f[0], f[1], f[2], f[3]
		case "SignedHeaders":
			a.signedHeaders = strings.Split(v, ";")
		case "Signature":
			a.signature = v
		default:
			return authHeader{}, fmt.Errorf("the Authorization header has an unknown part %q", k)
		}
	}
	if a.keyID == "" || len(a.signedHeaders) == 0 || a.signature == "" {
		return authHeader{}, errors.New("the Authorization header lacks its Credential, SignedHeaders or Signature")
	}
	return a, nil
}

// scope checks what AWS checks of a known key's request before its signature: that its
// credential is scoped to the platform's region (AWS: InvalidSignatureException, the Query
// protocol's SignatureDoesNotMatch, "Credential should be scoped to a valid region, not
// 'REGION'. "), and that it carries no session token, which the platform never issues
// (functions and the administrator sign with long-term keys): AWS answers a token it did not
// issue as an unknown key. It returns the error's code and message, or "" when both hold.
func (g *Gateway) scope(r *http.Request, a authHeader) (code, msg string) {
	if len(r.Header.Values("X-Amz-Security-Token")) > 0 {
		return "UnrecognizedClientException", "The security token included in the request is invalid. " +
			"(The local platform issues no session tokens: sign with its access key and secret alone, AWS_SESSION_TOKEN unset.)"
	}
	if g.Region != "" && a.region != g.Region {
		return "InvalidSignatureException", fmt.Sprintf("Credential should be scoped to a valid region, not '%s'. "+
			"(The local platform's region is %s.)", a.region, g.Region)
	}
	return "", ""
}

// errSignature is a signature that is not the one the key's secret gives.
type errSignature struct{ msg string }

func (e errSignature) Error() string { return e.msg }

const mismatch = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."

// verify recomputes the request's signature with the SDK's signer from the headers it
// signed, its body and secret, and compares it with the one sent.
func verify(ctx context.Context, r *http.Request, a authHeader, secret string, body []byte, svc iam.Service, now time.Time) error {
	want := signingName[svc]
	if svc == "" {
		want = ReportService
	}
	return verifyAs(ctx, r, a, secret, body, want, now)
}

// verifyAs is verify for the signing name want.
func verifyAs(ctx context.Context, r *http.Request, a authHeader, secret string, body []byte, want string, now time.Time) error {
	if a.service != want {
		return errSignature{fmt.Sprintf("Credential should be scoped to correct service: '%s'.", want)}
	}
	dates := r.Header.Values("X-Amz-Date")
	if len(dates) != 1 {
		return errSignature{"the request needs exactly one X-Amz-Date header (SigV4)"}
	}
	t, err := time.Parse("20060102T150405Z", dates[0])
	if err != nil {
		return errSignature{fmt.Sprintf("X-Amz-Date %q is not YYYYMMDDTHHMMSSZ", dates[0])}
	}
	if d := now.Sub(t); d > maxSkew || d < -maxSkew {
		return errSignature{fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - 15 min.)",
			dates[0], now.Add(-maxSkew).UTC().Format("20060102T150405Z"), now.UTC().Format("20060102T150405Z"))}
	}
	if !slices.Contains(a.signedHeaders, "host") || !slices.Contains(a.signedHeaders, "x-amz-date") ||
		(r.Header.Get("X-Amz-Target") != "" && !slices.Contains(a.signedHeaders, "x-amz-target")) {
		return errSignature{"the signature must cover the host, x-amz-date and (when sent) x-amz-target headers"}
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != hash {
		return errSignature{"X-Amz-Content-Sha256 is not the SHA-256 of the body"}
	}
	out := &http.Request{Method: r.Method, Host: r.Host, Header: http.Header{},
		URL: &url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}}
	creds := aws.Credentials{AccessKeyID: a.keyID, SecretAccessKey: secret}
	for _, h := range a.signedHeaders {
		switch h {
		case "host":
		case "content-length":
			out.ContentLength = int64(len(body))
		case "x-amz-security-token":
			creds.SessionToken = r.Header.Get(h)
		default:
			out.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	if err := v4.NewSigner().SignHTTP(ctx, creds, out, hash, a.service, a.region, t); err != nil {
		return errSignature{"the signature could not be computed: " + err.Error()}
	}
	got, err := parseAuthorization(out)
	if err != nil {
		return errSignature{err.Error()}
	}
	if !slices.Equal(got.signedHeaders, a.signedHeaders) || !hmac.Equal([]byte(got.signature), []byte(a.signature)) || got.date != a.date {
		return errSignature{mismatch}
	}
	return nil
}

// authError answers a request whose caller is not known or whose signature is not
// valid, as the service answers it.
func authError(w http.ResponseWriter, svc iam.Service, code, msg string) {
	status := http.StatusBadRequest
	if svc != iam.DynamoDB {
		status = http.StatusForbidden
	}
	switch svc {
	case iam.SQS:
		// SQS's JSON protocol names the Query API's code for the SDK (awsQueryCompatible).
		query := map[string]string{"UnrecognizedClientException": "InvalidClientTokenId", "InvalidSignatureException": "SignatureDoesNotMatch",
			"MissingAuthenticationTokenException": "MissingAuthenticationToken"}[code]
		if query == "" {
			query = code
		}
		w.Header().Set("x-amzn-query-error", query+";Sender")
		writeJSONError(w, status, "com.amazon.coral.service#"+code, msg)
	case iam.Lambda:
		writeLambdaError(w, status, code, msg)
	case iam.CloudFormation:
		xml := map[string]string{"UnrecognizedClientException": "InvalidClientTokenId", "InvalidSignatureException": "SignatureDoesNotMatch",
			"MissingAuthenticationTokenException": "MissingAuthenticationToken"}[code]
		if xml == "" {
			xml = code
		}
		writeXMLError(w, status, xml, msg)
	default:
		writeJSONError(w, status, "com.amazon.coral.service#"+code, msg)
	}
}

// refuse answers a request the endpoint does not serve (wrong Host, a web page's, too
// large), in the service's error format.
func refuse(w http.ResponseWriter, svc iam.Service, status int, code, msg string) {
	switch svc {
	case iam.SQS:
		w.Header().Set("x-amzn-query-error", code+";Sender")
		writeJSONError(w, status, "com.amazonaws.sqs#"+code, msg)
	case iam.Lambda:
		writeLambdaError(w, status, code, msg)
	case iam.CloudFormation:
		writeXMLError(w, status, code, msg)
	case iam.DynamoDB:
		writeJSONError(w, status, "com.amazonaws.dynamodb.v20120810#"+code, msg)
	default:
		writeJSONError(w, status, code, msg)
	}
}

func writeLambdaError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("X-Amzn-ErrorType", code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"Type": "User", "message": msg})
}

// ownHosts are the Host values the endpoint answers to for its listener: its address, and
// for a loopback or every-interface listener the names this machine's clients use.
func ownHosts(addr net.Addr) map[string]bool {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return nil
	}
	port := strconv.Itoa(tcp.Port)
	hosts := map[string]bool{}
	add := func(h string) {
		hosts[strings.ToLower(net.JoinHostPort(h, port))] = true
		if port == "80" {
			hosts[strings.ToLower(h)] = true
		}
	}
	add(tcp.IP.String())
	if tcp.IP.IsLoopback() || tcp.IP.IsUnspecified() {
		add("localhost")
		add("127.0.0.1")
		add("::1")
	}
	if tcp.IP.IsUnspecified() {
		// Containers (sam local) reach the machine by one of its addresses or by
		// host.docker.internal; names other than these are refused (DNS rebinding).
		add("host.docker.internal")
		if name, err := os.Hostname(); err == nil {
			add(name)
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					add(n.IP.String())
				}
			}
		}
	}
	return hosts
}

// fromBrowser: a web page's request carries an Origin, or a Sec-Fetch-Site other than
// "none" (which a browser sends only for what its user typed). No AWS SDK sends either.
func fromBrowser(r *http.Request) bool {
	if len(r.Header.Values("Origin")) > 0 {
		return true
	}
	site := r.Header.Values("Sec-Fetch-Site")
	return len(site) > 0 && !(len(site) == 1 && site[0] == "none")
}
