// Package operators is the local platform's Service Center gate (`sundial up --operators
// FILE`): it decides requests to the Service Center API as API Gateway does with AWS_IAM
// authorization. A SigV4-signed request is verified against the signing key's secret (as
// infra/gateway verifies the local endpoint's), and the operator's IAM policy documents are
// evaluated by infra/iam for execute-api:Invoke on the route's ARN
// (arn:aws:execute-api:REGION:ACCOUNT:APIID/STAGE/METHOD/PATH). A key that is no operator's
// nor the administrator's, or a wrong secret, is refused; the administrator is allowed
// everything. An operator's optional token logs the console in as that operator.
package operators

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial/infra/gateway"
	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/ops"
)

// SigningName is the service name requests to the Service Center API are signed for.
const SigningName = "execute-api"

// Operator is one person allowed in, with the IAM policy documents they would carry on AWS.
type Operator struct {
	Name            string `yaml:"name"`
	AccessKeyID     string `yaml:"accessKeyId"`
	SecretAccessKey string `yaml:"secretAccessKey"`
	Token           string `yaml:"token"` // optional: their console login
	Policies        []any  `yaml:"policies"`

	role *iam.Role
}

// File is the operators file.
type File struct {
	Operators []Operator `yaml:"operators"`
}

// Admin is the platform's administrator: allowed everything.
type Admin struct {
	Name, AccessKeyID, SecretAccessKey string
}

// Gate decides Service Center API requests; it implements console.Gate.
type Gate struct {
	// Region, Account, APIID and Stage build the route's ARN.
	Region, Account, APIID, Stage string
	Now                           func() time.Time

	admin   Admin
	byKey   map[string]*Operator
	byToken map[string]*Operator
	byName  map[string]*Operator
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.@-]{1,64}$`)

// Load reads an operators file; every mistake is named with its operator and field.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("operators: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("operators %s: %w (want operators: [{name, accessKeyId, secretAccessKey, token, policies}])", path, err)
	}
	if len(f.Operators) == 0 {
		return nil, fmt.Errorf("operators %s: no operators listed", path)
	}
	return &f, nil
}

// New builds the gate for the operators of f and the administrator admin (whose key and
// name may be empty when the platform has none).
func New(f *File, admin Admin, region, account, apiID string) (*Gate, error) {
	g := &Gate{Region: region, Account: account, APIID: apiID, Stage: "$default", Now: time.Now, admin: admin,
		byKey: map[string]*Operator{}, byToken: map[string]*Operator{}, byName: map[string]*Operator{}}
	for i := range f.Operators {
		op := &f.Operators[i]
		where := fmt.Sprintf("operators[%d]", i)
		if op.Name != "" {
			where += " (" + op.Name + ")"
		}
		switch {
		case !namePattern.MatchString(op.Name):
			return nil, fmt.Errorf("%s: name must match %s", where, namePattern)
		case g.byName[op.Name] != nil:
			return nil, fmt.Errorf("%s: name given twice", where)
		case op.AccessKeyID == "" || op.SecretAccessKey == "":
			return nil, fmt.Errorf("%s: accessKeyId and secretAccessKey are required", where)
		case op.AccessKeyID == admin.AccessKeyID || g.byKey[op.AccessKeyID] != nil:
			return nil, fmt.Errorf("%s: accessKeyId %s is another identity's", where, op.AccessKeyID)
		case op.Token != "" && len(op.Token) < 16:
			return nil, fmt.Errorf("%s: token must be at least 16 characters", where)
		case op.Token != "" && g.byToken[op.Token] != nil:
			return nil, fmt.Errorf("%s: token is another operator's", where)
		case len(op.Policies) == 0:
			return nil, fmt.Errorf("%s: no policies: give the IAM policy documents they carry on AWS", where)
		}
		op.role = &iam.Role{Name: op.Name}
		for j, doc := range op.Policies {
			p, err := iam.ParseDocument(fmt.Sprintf("%s policies[%d]", where, j), doc)
			if err != nil {
				return nil, err
			}
			op.role.Policies = append(op.role.Policies, p)
		}
		g.byKey[op.AccessKeyID], g.byName[op.Name] = op, op
		if op.Token != "" {
			g.byToken[op.Token] = op
		}
	}
	return g, nil
}

// VerifySigned verifies a SigV4-signed request: the caller's name, and whether it is the
// administrator.
func (g *Gate) VerifySigned(ctx context.Context, r *http.Request, body []byte) (string, bool, error) {
	keyID, err := gateway.VerifySigned(ctx, r, body, SigningName, func(id string) (string, bool) {
		if g.admin.AccessKeyID != "" && id == g.admin.AccessKeyID {
			return g.admin.SecretAccessKey, true
		}
		if op := g.byKey[id]; op != nil {
			return op.SecretAccessKey, true
		}
		return "", false
	}, g.Now())
	if err != nil {
		return "", false, err
	}
	if g.admin.AccessKeyID != "" && keyID == g.admin.AccessKeyID {
		return g.admin.Name, true, nil
	}
	return g.byKey[keyID].Name, false, nil
}

// TokenOperator is the operator whose console token tok is (compared in constant time).
func (g *Gate) TokenOperator(tok string) (string, bool) {
	name, found := "", false
	for t, op := range g.byToken {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			name, found = op.Name, true
		}
	}
	return name, found
}

// Authorize decides by the operations table (internal/ops): the request is the operation
// whose method and route it has (none: refused, no such route), and the operator's policies
// are evaluated for that operation's IAM action (execute-api:Invoke) on the request's ARN.
func (g *Gate) Authorize(name, method, path string) error {
	op := g.byName[name]
	if op == nil {
		return errors.New("unknown operator " + name)
	}
	o, ok := ops.Match(method, path)
	if !ok {
		return fmt.Errorf("%w: no such API route: %s %s", errkind.NotFound, method, path)
	}
	arn := ops.InvokeARN(g.Region, g.Account, g.APIID, g.Stage, method, path)
	if ok, _ := op.role.Decide(iam.Call{Action: o.IAMAction, Resource: arn}); !ok {
		return &console.Denied{Who: name, Action: o.IAMAction, Resource: arn}
	}
	return nil
}
