#!/usr/bin/env bash
# LocalStack ready hook: LocalStack runs the executable *.sh files of
# /etc/localstack/init/ready.d once it serves requests. This one deploys
# Sundial's template.yaml as the CloudFormation stack $SUNDIAL_STACK and prints
# its outputs. The repository is mounted read-only at $SUNDIAL_SRC (/sundial).
#
# How the template is deployed: CloudFormation's SAM transform wants each
# function's code in S3, so the template is packaged into a bucket of this
# LocalStack first (awslocal cloudformation package), then deployed through a
# change set (awslocal cloudformation deploy).
#
# Function code: `sam build` on the host leaves .aws-sam/build/template.yaml,
# whose functions point at their built bootstrap (make build-<LogicalId>); that
# template is the one packaged. Without it every function gets a stub bootstrap
# that only says to run sam build, and the publish custom resource is left out
# (PublishTimers=false: a stub cannot answer CloudFormation), so that the
# tables and queues are still deployed for `sundial up --endpoint`.
#
# Parameters: ServiceCenter=false by default (HTTP APIs are not in LocalStack's
# free plan), then SUNDIAL_PARAMETER_OVERRIDES, space-separated Key=Value
# pairs, which win.
set -euo pipefail

# LocalStack wants credentials on every request, init hooks included; any
# values do (test/test is LocalStack's default account 000000000000).
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-test}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-test}"
export AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}"

stack="${SUNDIAL_STACK:-sundial}"
src="${SUNDIAL_SRC:-/sundial}"
bucket="${SUNDIAL_ARTIFACT_BUCKET:-sundial-artifacts}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

declare -A param=([ServiceCenter]=false)

if [[ -f "$src/.aws-sam/build/template.yaml" ]]; then
  template="$src/.aws-sam/build/template.yaml"
  echo "sundial: deploying $template (sam build output)"
else
  echo "sundial: no .aws-sam/build (run 'sam build' for working functions); deploying with stub function code"
  mkdir -p "$work/stub"
  printf '#!/bin/sh\necho "sundial: this function was deployed without code; run sam build and restart LocalStack" >&2\nexit 1\n' >"$work/stub/bootstrap"
  chmod +x "$work/stub/bootstrap"
  sed -E "s#^([[:space:]]*CodeUri:[[:space:]]*)\.[[:space:]]*\$#\\1$work/stub#" "$src/template.yaml" >"$work/template.yaml"
  if ! grep -q "CodeUri: $work/stub" "$work/template.yaml"; then
    echo "sundial: template.yaml has no 'CodeUri: .' to give the stub code to" >&2
    exit 1
  fi
  template="$work/template.yaml"
  param[PublishTimers]=false
fi

read -r -a overrides <<<"${SUNDIAL_PARAMETER_OVERRIDES:-}"
for kv in ${overrides[@]+"${overrides[@]}"}; do
  if [[ "$kv" != ?*=* ]]; then
    echo "sundial: SUNDIAL_PARAMETER_OVERRIDES: '$kv' is not Key=Value" >&2
    exit 1
  fi
  param[${kv%%=*}]="${kv#*=}"
done
params=()
for k in "${!param[@]}"; do
  params+=("$k=${param[$k]}")
done
echo "sundial: parameters ${params[*]}"

awslocal s3api head-bucket --bucket "$bucket" >/dev/null 2>&1 || awslocal s3 mb "s3://$bucket"
awslocal cloudformation package \
  --template-file "$template" \
  --s3-bucket "$bucket" \
  --output-template-file "$work/packaged.yaml"
# --s3-bucket: templates above 51,200 bytes go to CloudFormation through S3.
if ! awslocal cloudformation deploy \
  --template-file "$work/packaged.yaml" \
  --s3-bucket "$bucket" \
  --stack-name "$stack" \
  --capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND \
  --no-fail-on-empty-changeset \
  --parameter-overrides "${params[@]}"; then
  echo "sundial: deploying stack $stack failed; the failed resources:" >&2
  # shellcheck disable=SC2016 # backquotes are JMESPath literals, not shell
  awslocal cloudformation describe-stack-events --stack-name "$stack" \
    --query 'StackEvents[?ends_with(ResourceStatus, `FAILED`)].[LogicalResourceId,ResourceType,ResourceStatusReason]' \
    --output table >&2 || true
  exit 1
fi

echo "sundial: stack $stack outputs:"
awslocal cloudformation describe-stacks --stack-name "$stack" \
  --query 'Stacks[0].Outputs[].[OutputKey,OutputValue]' --output table
