#!/usr/bin/env bash
# LocalStack ready hook: deploy Sundial's template.yaml as a CloudFormation
# stack and print its outputs. Runs inside the LocalStack container, where the
# repository is mounted read-only at /sundial.
#
# Function code: CloudFormation's SAM transform wants CodeUri in S3, so the
# template is packaged first. If `sam build` has run (.aws-sam/build), its
# template and bootstrap binaries are used and the functions work; otherwise
# every function gets a stub bootstrap that only says to run `sam build`, and
# the tables and queues are still deployed for `sundial up --endpoint`.
set -euo pipefail

stack="${SUNDIAL_STACK:-sundial}"
src="${SUNDIAL_SRC:-/sundial}"
bucket="${SUNDIAL_ARTIFACT_BUCKET:-sundial-artifacts}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [[ -f "$src/.aws-sam/build/template.yaml" ]]; then
  template="$src/.aws-sam/build/template.yaml"
else
  echo "sundial: no .aws-sam/build (run 'sam build' for working functions); deploying with stub function code"
  mkdir -p "$work/stub"
  printf '#!/bin/sh\necho "sundial: this function was deployed without code; run sam build and redeploy" >&2\nexit 1\n' >"$work/stub/bootstrap"
  chmod +x "$work/stub/bootstrap"
  sed -E "s#^([[:space:]]*CodeUri:[[:space:]]*)\.[[:space:]]*\$#\\1$work/stub#" "$src/template.yaml" >"$work/template.yaml"
  template="$work/template.yaml"
fi

read -r -a overrides <<<"${SUNDIAL_PARAMETER_OVERRIDES:-}"

if command -v samlocal >/dev/null 2>&1; then
  samlocal deploy \
    --template-file "$template" \
    --stack-name "$stack" \
    --resolve-s3 \
    --capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND \
    --no-confirm-changeset \
    --no-fail-on-empty-changeset \
    ${overrides[@]:+--parameter-overrides "${overrides[@]}"}
else
  awslocal s3api head-bucket --bucket "$bucket" >/dev/null 2>&1 || awslocal s3 mb "s3://$bucket"
  awslocal cloudformation package \
    --template-file "$template" \
    --s3-bucket "$bucket" \
    --output-template-file "$work/packaged.yaml"
  awslocal cloudformation deploy \
    --template-file "$work/packaged.yaml" \
    --stack-name "$stack" \
    --capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND \
    --no-fail-on-empty-changeset \
    ${overrides[@]:+--parameter-overrides "${overrides[@]}"}
fi

echo "sundial: stack $stack outputs:"
awslocal cloudformation describe-stacks --stack-name "$stack" \
  --query 'Stacks[0].Outputs[].[OutputKey,OutputValue]' --output table
