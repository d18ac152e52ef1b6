package queue

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"golang.org/x/sync/errgroup"
)

// AttributesAPI is the part of the SQS client that reads queue attributes.
type AttributesAPI interface {
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// Depth is a queue's approximate message counts (SQS counts are eventually consistent).
type Depth struct {
	// Priority is 1..4, or 0 for the dead-letter queue.
	Priority int    `json:"priority"`
	Name     string `json:"name"`
	// Visible: ready to be received; InFlight: received, not yet deleted; Delayed: sent with
	// DelaySeconds that has not elapsed (firings waiting for their due second).
	Visible  int `json:"visible"`
	InFlight int `json:"inFlight"`
	Delayed  int `json:"delayed"`
}

// Monitor reads the depth of the priority queues and the dead-letter queue.
type Monitor struct {
	API    AttributesAPI
	Queues [4]string // P1..P4
	DLQ    string    // optional
}

var depthAttributes = []types.QueueAttributeName{
	types.QueueAttributeNameApproximateNumberOfMessages,
	types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
}

// Depths returns P1..P4 and then the dead-letter queue (when configured), read in parallel.
func (m Monitor) Depths(ctx context.Context) ([]Depth, error) {
	out := make([]Depth, 0, 5)
	for i := range m.Queues {
		out = append(out, Depth{Priority: i + 1, Name: "P" + strconv.Itoa(i+1)})
	}
	if m.DLQ != "" {
		out = append(out, Depth{Name: "DLQ"})
	}
	g, ctx := errgroup.WithContext(ctx)
	for i := range out {
		url := m.DLQ
		if out[i].Priority > 0 {
			url = m.Queues[out[i].Priority-1]
		}
		g.Go(func() error {
			d, err := depthOf(ctx, m.API, url)
			if err != nil {
				return fmt.Errorf("queue %s depth: %w", out[i].Name, err)
			}
			d.Priority, d.Name = out[i].Priority, out[i].Name
			out[i] = d
			return nil
		})
	}
	return out, g.Wait()
}

// depthOf reads one queue's approximate counts.
func depthOf(ctx context.Context, api AttributesAPI, url string) (Depth, error) {
	res, err := api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: depthAttributes})
	if err != nil {
		return Depth{}, err
	}
	var n [3]int
	for i, name := range depthAttributes {
		v := res.Attributes[string(name)]
		if n[i], err = strconv.Atoi(v); err != nil {
			return Depth{}, fmt.Errorf("%s is %q", name, v)
		}
	}
	return Depth{Visible: n[0], InFlight: n[1], Delayed: n[2]}, nil
}
