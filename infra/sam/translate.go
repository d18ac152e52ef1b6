// Package sam reads template.yaml the way SAM deploys it: translated by the AWS SAM
// translator (aws-sam-translator, the library `sam deploy` and cfn-lint use) into plain
// CloudFormation, whose resources, parameters, conditions and intrinsic functions it then
// evaluates for a stack. The local platform takes everything from that evaluation — the
// tables and queues it creates, each function's environment, timeout, memory, architecture,
// IAM policy, schedules and SQS event sources — so a template change reaches it with no Go
// change.
package sam

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed translate.py
var translateScript string

// TranslatorPackage is the Python package that translates: preinstalled with cfn-lint.
const TranslatorPackage = "aws-sam-translator"

// Translate translates a SAM template (YAML or JSON) into a CloudFormation Template with
// the SAM translator, run by python3. Translations are cached by the template's content
// in the user's cache directory (a translation takes about a second; test binaries each
// need one).
func Translate(ctx context.Context, body []byte) (*Template, error) {
	sum := sha256.Sum256(append([]byte(translateScript), body...))
	cache := ""
	if dir, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(dir, "sundial", "sam", hex.EncodeToString(sum[:16])+".json")
		if b, err := os.ReadFile(cache); err == nil {
			if t, err := Parse(b); err == nil {
				return t, nil
			}
		}
	}
	out, err := runTranslator(ctx, body)
	if err != nil {
		return nil, err
	}
	t, err := Parse(out)
	if err != nil {
		return nil, fmt.Errorf("sam: the translator's output: %w", err)
	}
	if cache != "" && os.MkdirAll(filepath.Dir(cache), 0o755) == nil {
		tmp := fmt.Sprintf("%s.%d.tmp", cache, os.Getpid())
		if os.WriteFile(tmp, out, 0o644) == nil {
			_ = os.Rename(tmp, cache)
		}
	}
	return t, nil
}

// TranslateFile reads and translates a template file.
func TranslateFile(ctx context.Context, path string) (*Template, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sam: %w", err)
	}
	t, err := Translate(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func runTranslator(ctx context.Context, body []byte) ([]byte, error) {
	python, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("sam: python3 is not installed; the SAM translator (%s) runs on it", TranslatorPackage)
	}
	cmd := exec.CommandContext(ctx, python, "-c", translateScript)
	cmd.Stdin = bytes.NewReader(body)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == 2:
			return nil, fmt.Errorf("sam: the template is invalid (SAM translator):\n%s", msg)
		case strings.Contains(msg, "No module named 'samtranslator'"):
			return nil, fmt.Errorf("sam: the SAM translator is not installed: python3 -m pip install %s (cfn-lint brings it)", TranslatorPackage)
		default:
			return nil, fmt.Errorf("sam: translate: %w\n%s", err, msg)
		}
	}
	return stdout.Bytes(), nil
}

// Parse reads a CloudFormation template in JSON (a translation).
func Parse(b []byte) (*Template, error) {
	var t Template
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	if len(t.Resources) == 0 {
		return nil, errors.New("the template has no resources")
	}
	return &t, nil
}
