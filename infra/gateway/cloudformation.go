package gateway

import (
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/sundialhq/sundial/infra/iam"
)

type cfnParam struct {
	ParameterKey   string `xml:"ParameterKey"`
	ParameterValue string `xml:"ParameterValue"`
}

type cfnOutput struct {
	OutputKey   string `xml:"OutputKey"`
	OutputValue string `xml:"OutputValue"`
}

type cfnStack struct {
	StackName    string      `xml:"StackName"`
	StackID      string      `xml:"StackId"`
	StackStatus  string      `xml:"StackStatus"`
	CreationTime string      `xml:"CreationTime"`
	Parameters   []cfnParam  `xml:"Parameters>member"`
	Outputs      []cfnOutput `xml:"Outputs>member"`
}

type describeStacksResponse struct {
	XMLName xml.Name   `xml:"http://cloudformation.amazonaws.com/doc/2010-05-15/ DescribeStacksResponse"`
	Stacks  []cfnStack `xml:"DescribeStacksResult>Stacks>member"`
	Request string     `xml:"ResponseMetadata>RequestId"`
}

// cloudFormation answers DescribeStacks for the platform's stacks (read only: the platform
// provisions from the template itself, see infra/provision).
func (g *Gateway) cloudFormation(w http.ResponseWriter, req iam.Request) {
	if req.Operation != "DescribeStacks" {
		writeXMLError(w, http.StatusBadRequest, "ValidationError",
			fmt.Sprintf("the local platform answers only DescribeStacks, not %s: it provisions from template.yaml's SAM translation itself (sundial up)", req.Operation))
		return
	}
	name := req.Form.Get("StackName")
	g.mu.RLock()
	st, ok := g.stacks[name]
	g.mu.RUnlock()
	if !ok {
		writeXMLError(w, http.StatusBadRequest, "ValidationError", fmt.Sprintf("Stack with id %s does not exist", name))
		return
	}
	out := cfnStack{StackName: st.Name, StackID: fmt.Sprintf("arn:aws:cloudformation:%s:000000000000:stack/%s/local", st.Region, st.Name),
		StackStatus: "CREATE_COMPLETE", CreationTime: st.Created.UTC().Format(time.RFC3339)}
	for _, k := range slices.Sorted(maps.Keys(st.Parameters)) {
		out.Parameters = append(out.Parameters, cfnParam{k, st.Parameters[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(st.Outputs)) {
		out.Outputs = append(out.Outputs, cfnOutput{k, st.Outputs[k]})
	}
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write([]byte(xml.Header))
	_ = xml.NewEncoder(w).Encode(describeStacksResponse{Stacks: []cfnStack{out}, Request: "local"})
}

type errorResponse struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Type    string   `xml:"Error>Type"`
	Code    string   `xml:"Error>Code"`
	Message string   `xml:"Error>Message"`
	Request string   `xml:"RequestId"`
}

func writeXMLError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_ = xml.NewEncoder(w).Encode(errorResponse{Type: "Sender", Code: code, Message: msg, Request: "local"})
}
