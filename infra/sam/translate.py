# Translates a SAM template (stdin, YAML or JSON) into CloudFormation (stdout, JSON) with the
# AWS SAM translator, as `sam deploy` does before CloudFormation sees it. Local CodeUri paths
# become S3 locations first, as `sam package` would make them (the translator accepts only
# those). Policies given as managed-policy *names* would need IAM to resolve; the loader
# answers none, so such a policy fails the translation with the translator's own message.
import json
import os
import sys

os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")

from samtranslator.public.exceptions import InvalidDocumentException
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse


class NoManagedPolicies:
    def load(self):
        return {}


def main():
    template = yaml_parse(sys.stdin.read())
    for logical_id, res in (template.get("Resources") or {}).items():
        if not isinstance(res, dict) or res.get("Type") != "AWS::Serverless::Function":
            continue
        props = res.setdefault("Properties", {})
        uri = props.get("CodeUri")
        if uri is None or (isinstance(uri, str) and not uri.startswith("s3://")):
            props["CodeUri"] = "s3://sundial-local-package/" + logical_id
    try:
        out = transform(template, {}, NoManagedPolicies())
    except InvalidDocumentException as e:
        sys.stderr.write("\n".join(str(c) for c in e.causes) + "\n")
        sys.exit(2)
    json.dump(out, sys.stdout, default=str)


main()
