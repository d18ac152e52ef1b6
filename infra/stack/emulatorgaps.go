package stack

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"gopkg.in/yaml.v3"
)

// tableSettings is the part of a template that moto's CloudFormation (5.x)
// ignores when it creates an AWS::DynamoDB::Table: TimeToLiveSpecification
// and PointInTimeRecoverySpecification. Only literal values count; a table
// whose setting is an intrinsic function is left to CloudFormation.
type tableSettings struct {
	Resources map[string]struct {
		Type       string `yaml:"Type"`
		Properties struct {
			TTL *struct {
				AttributeName string `yaml:"AttributeName"`
				Enabled       string `yaml:"Enabled"`
			} `yaml:"TimeToLiveSpecification"`
			PITR *struct {
				Enabled string `yaml:"PointInTimeRecoveryEnabled"`
			} `yaml:"PointInTimeRecoverySpecification"`
		} `yaml:"Properties"`
	} `yaml:"Resources"`
}

// fillEmulatorGaps applies, through the DynamoDB API, the table settings of
// the template that the emulator's CloudFormation did not: TTL and
// point-in-time recovery. Settings already in force are left alone, so on an
// emulator that honours them (LocalStack) this only reads.
func fillEmulatorGaps(ctx context.Context, cfg aws.Config, cfn *cloudformation.Client, stackName string, template []byte) error {
	var tpl tableSettings
	if err := yaml.Unmarshal(template, &tpl); err != nil {
		return fmt.Errorf("read table settings from the template: %w", err)
	}
	physical, err := physicalIDs(ctx, cfn, stackName)
	if err != nil {
		return err
	}

	db := dynamodb.NewFromConfig(cfg)
	logicalIDs := make([]string, 0, len(tpl.Resources))
	for id := range tpl.Resources {
		logicalIDs = append(logicalIDs, id)
	}
	slices.Sort(logicalIDs)
	for _, id := range logicalIDs {
		res := tpl.Resources[id]
		table := physical[id]
		if res.Type != "AWS::DynamoDB::Table" || table == "" {
			continue
		}
		if ttl := res.Properties.TTL; ttl != nil && ttl.Enabled == "true" && ttl.AttributeName != "" {
			if err := ensureTTL(ctx, db, table, ttl.AttributeName); err != nil {
				return err
			}
		}
		if pitr := res.Properties.PITR; pitr != nil && pitr.Enabled == "true" {
			if err := ensurePITR(ctx, db, table); err != nil {
				return err
			}
		}
	}
	return nil
}

func ensureTTL(ctx context.Context, db *dynamodb.Client, table, attr string) error {
	cur, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		return fmt.Errorf("describe TTL of %s: %w", table, err)
	}
	if d := cur.TimeToLiveDescription; d != nil &&
		(d.TimeToLiveStatus == ddbtypes.TimeToLiveStatusEnabled || d.TimeToLiveStatus == ddbtypes.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(table),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String(attr), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("enable TTL on %s.%s: %w", table, attr, err)
	}
	return nil
}

func ensurePITR(ctx context.Context, db *dynamodb.Client, table string) error {
	cur, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(table)})
	if err != nil {
		return fmt.Errorf("describe continuous backups of %s: %w", table, err)
	}
	if d := cur.ContinuousBackupsDescription; d != nil && d.PointInTimeRecoveryDescription != nil &&
		d.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus == ddbtypes.PointInTimeRecoveryStatusEnabled {
		return nil
	}
	_, err = db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{
		TableName:                        aws.String(table),
		PointInTimeRecoverySpecification: &ddbtypes.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("enable point-in-time recovery on %s: %w", table, err)
	}
	return nil
}

// PhysicalIDs is each resource's physical ID (a table's name, a queue's URL) in the stack
// deployed as name, by logical ID.
func PhysicalIDs(ctx context.Context, cfg aws.Config, name string) (map[string]string, error) {
	return physicalIDs(ctx, cloudformation.NewFromConfig(cfg), name)
}

func physicalIDs(ctx context.Context, cfn *cloudformation.Client, name string) (map[string]string, error) {
	physical := map[string]string{}
	pages := cloudformation.NewListStackResourcesPaginator(cfn, &cloudformation.ListStackResourcesInput{StackName: aws.String(name)})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list resources of stack %q: %w", name, err)
		}
		for _, r := range out.StackResourceSummaries {
			physical[aws.ToString(r.LogicalResourceId)] = aws.ToString(r.PhysicalResourceId)
		}
	}
	return physical, nil
}
