# Translates a SAM template (stdin, YAML or JSON) into CloudFormation (stdout, JSON) with the
# AWS SAM translator, as `sam deploy` does before CloudFormation sees it. Local CodeUri paths
# become S3 locations first, as `sam package` would make them (the translator accepts only
# those); a local path is kept in the function's Metadata as LocalCodeUri, where the local
# platform builds an app's function from (infra/local, sundial up --app-stack). Policies given as managed-policy *names* would need IAM to resolve; the loader
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
    globals_uri = ((template.get("Globals") or {}).get("Function") or {}).get("CodeUri")
    for logical_id, res in (template.get("Resources") or {}).items():
        if not isinstance(res, dict) or res.get("Type") != "AWS::Serverless::Function":
            continue
        props = res.setdefault("Properties", {})
        uri = props.get("CodeUri")
        if uri is None:
            uri = globals_uri
        if uri is None or (isinstance(uri, str) and not uri.startswith("s3://")):
            res.setdefault("Metadata", {})["LocalCodeUri"] = uri if isinstance(uri, str) else "."
            props["CodeUri"] = "s3://sundial-local-package/" + logical_id
    try:
        out = transform(template, {}, NoManagedPolicies())
    except InvalidDocumentException as e:
        sys.stderr.write("\n".join(str(c) for c in e.causes) + "\n")
        sys.exit(2)
    json.dump(out, sys.stdout, default=str)


main()
