// The `sam build` contract of the functions: template.yaml builds every function with
// `BuildMethod: makefile`, so SAM runs the Makefile's build-<LogicalId> target, which must
// leave a bootstrap for the function's architecture in ARTIFACTS_DIR.
package functions_test

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// samFunction is what the contract needs of an AWS::Serverless::Function.
type samFunction struct {
	LogicalID    string
	CodeURI      string
	Architecture string // arm64 or x86_64
}

// makefileFunctions lists template's functions built with BuildMethod makefile. The template
// is read as a yaml.Node tree: CloudFormation's short-form tags (!Ref, !GetAtt, !If, …) do not
// decode into Go values, and none of the fields read here uses them.
func makefileFunctions(t *testing.T, template []byte) []samFunction {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(template, &doc))
	require.NotEmpty(t, doc.Content, "template.yaml is empty")
	root := doc.Content[0]
	globalArch := scalarList(lookup(root, "Globals", "Function", "Architectures"))
	globalCodeURI := scalar(lookup(root, "Globals", "Function", "CodeUri"))
	resources := lookup(root, "Resources")
	require.NotNil(t, resources, "template.yaml has Resources")
	var out []samFunction
	for i := 0; i+1 < len(resources.Content); i += 2 {
		id, res := resources.Content[i].Value, resources.Content[i+1]
		if scalar(lookup(res, "Type")) != "AWS::Serverless::Function" {
			continue
		}
		if scalar(lookup(res, "Metadata", "BuildMethod")) != "makefile" {
			continue
		}
		f := samFunction{LogicalID: id, CodeURI: globalCodeURI, Architecture: "x86_64"} // Lambda's default
		if v := scalar(lookup(res, "Properties", "CodeUri")); v != "" {
			f.CodeURI = v
		}
		arch := scalarList(lookup(res, "Properties", "Architectures"))
		if arch == nil {
			arch = globalArch
		}
		if len(arch) == 1 {
			f.Architecture = arch[0]
		}
		out = append(out, f)
	}
	return out
}

// lookup follows mapping keys from n; nil when one is missing.
func lookup(n *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func scalarList(n *yaml.Node) []string {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, c.Value)
	}
	return out
}

var elfMachine = map[string]elf.Machine{"arm64": elf.EM_AARCH64, "x86_64": elf.EM_X86_64}

// TestSAMBuildTargets runs each function's build target the way `sam build` does (the
// CustomMakeBuilder of aws-lambda-builders): the function's CodeUri is copied, without .git
// and .aws-sam, to a scratch directory, and `make --makefile <CodeUri>/Makefile
// build-<LogicalId>` runs there with ARTIFACTS_DIR in the environment. The artifact must be a
// static Linux executable named bootstrap for the function's architecture (provided.al2023).
func TestSAMBuildTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every function")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed to build as SAM does: %v", err)
	}
	template, err := os.ReadFile("../template.yaml")
	require.NoError(t, err)
	fns := makefileFunctions(t, template)
	ids := make([]string, len(fns))
	for i, f := range fns {
		ids[i] = f.LogicalID
	}
	for _, want := range []string{"FetchFunction", "ProcessorFunction", "RecoveryFunction", "ApiFunction", "PublishFunction", "OrderPushFunction"} {
		require.Contains(t, ids, want, "template.yaml builds %s with the Makefile", want)
	}
	// The example app's own stack builds its function with the root Makefile too (CodeUri
	// ../.. from examples/billing); its CodeUri is made relative to the repository root.
	app, err := os.ReadFile("../examples/billing/template.yaml")
	require.NoError(t, err)
	for _, f := range makefileFunctions(t, app) {
		f.CodeURI = filepath.Join("examples/billing", f.CodeURI)
		fns, ids = append(fns, f), append(ids, f.LogicalID)
	}
	require.Contains(t, ids, "BillingInvoicesFunction", "examples/billing/template.yaml builds its action with the Makefile")

	makefile, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	t.Run("NoStaleTargets", func(t *testing.T) {
		for _, m := range regexp.MustCompile(`(?m)^build-([A-Za-z0-9]+):`).FindAllSubmatch(makefile, -1) {
			require.Contains(t, ids, string(m[1]), "Makefile target build-%s builds no function of template.yaml", m[1])
		}
	})

	for _, f := range fns {
		t.Run(f.LogicalID, func(t *testing.T) {
			src, err := filepath.Abs(filepath.Join("..", f.CodeURI))
			require.NoError(t, err)
			require.FileExists(t, filepath.Join(src, "Makefile"), "SAM reads the Makefile from CodeUri")
			require.Contains(t, elfMachine, f.Architecture)

			scratch, artifacts := t.TempDir(), t.TempDir()
			copySource(t, src, scratch)
			cmd := exec.Command("make", "--makefile", filepath.Join(src, "Makefile"), "build-"+f.LogicalID)
			cmd.Dir = scratch
			cmd.Env = append(os.Environ(), "ARTIFACTS_DIR="+artifacts)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Run(), "make build-%s:\n%s", f.LogicalID, out.String())

			bootstrap := filepath.Join(artifacts, "bootstrap")
			info, err := os.Stat(bootstrap)
			require.NoError(t, err, "build-%s leaves bootstrap in ARTIFACTS_DIR:\n%s", f.LogicalID, out.String())
			require.NotZero(t, info.Mode().Perm()&0o111, "bootstrap is executable")
			bin, err := elf.Open(bootstrap)
			require.NoError(t, err, "bootstrap is an ELF binary")
			defer bin.Close()
			require.Equal(t, elfMachine[f.Architecture], bin.Machine, "built for %s", f.Architecture)
			require.Equal(t, elf.ELFCLASS64, bin.Class)
			require.Equal(t, elf.ET_EXEC, bin.Type, "an executable")
			require.Nil(t, bin.Section(".interp"), "static: provided.al2023 runs it without a loader of ours")
			require.Equal(t, elf.ELFOSABI_NONE, bin.OSABI, "System V / Linux ABI")

			if f.LogicalID == "PublishFunction" {
				manifest, err := os.ReadFile(filepath.Join(artifacts, "timers.yaml"))
				require.NoError(t, err, "the publish function carries its manifest")
				want, err := os.ReadFile("../examples/timers.yaml")
				require.NoError(t, err)
				require.Equal(t, string(want), string(manifest), "MANIFEST defaults to examples/timers.yaml")
			}
			entries, err := os.ReadDir(artifacts)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			require.Subset(t, []string{"bootstrap", "timers.yaml"}, names, "nothing else is packaged")
			require.False(t, slices.Contains(names, "timers.yaml") && f.LogicalID != "PublishFunction", "only the publish function carries a manifest")
		})
	}
}

// copySource copies src to dst without .git and .aws-sam, as SAM's CopySourceAction does.
func copySource(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if top := strings.Split(rel, string(filepath.Separator))[0]; top == ".git" || top == ".aws-sam" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, info.Mode().Perm())
		default:
			return nil // symlinks and sockets: none in the source
		}
	})
	require.NoError(t, err, fmt.Sprintf("copy %s to the scratch directory", src))
}
