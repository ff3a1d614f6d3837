package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"
	"go.uber.org/zap"

	"github.com/switchyard/switchyard/agent"
)

const agentUsage = `usage: switchyard agent <command> [flags]

The agent runtime: a reasoning model (Bedrock Runtime Converse, model
$REASONING_MODEL_ID) plans and calls one tool, a small model on an endpoint
(SageMaker Runtime InvokeEndpoint, endpoint $SLM_ENDPOINT_NAME), behind the
hosted agent runtime's contract: POST /invocations, GET /ping, port 8080
(and InvokeAgentRuntime's POST /runtimes/{agentRuntimeArn}/invocations).

commands:
  serve          run the runtime in the foreground
  dev            start the runtime detached (own session, a pid file)
  invoke         send a prompt to a running runtime
  create         write a new course folder (the tool's config) from a template
  verify-local   make one real tool call to an endpoint; print the answer and its latency
  cleanup        stop what dev started (the pid file's process only)

Run 'switchyard help agent <command>' for the flags of a command.
`

// Environment of the agent commands besides the runtime's own variables.
const (
	envAgentURL = "SWITCHYARD_AGENT_URL"
	// envNoticeShown tells a runtime started by dev that dev has shown the
	// cost notice already.
	envNoticeShown      = "SWITCHYARD_AGENT_NOTICE_SHOWN"
	defaultAgentAddress = "127.0.0.1:8080"
)

// agentEnv is what the agent commands read besides their arguments; tests
// give their own.
type agentEnv struct {
	getenv func(string) string
	exe    func() (string, error) // the binary dev starts
}

func agentCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return agentEnv{getenv: os.Getenv, exe: os.Executable}.run(ctx, args, stdout, stderr)
}

// run dispatches to an agent subcommand.
func (e agentEnv) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, agentUsage)
		return fmt.Errorf("%w: agent needs a command", errUsage)
	}
	if args[0] == "help" || isHelpFlag(args[0]) {
		_, err := fmt.Fprint(stdout, agentUsage)
		return err
	}
	sub, ok := e.commands()[args[0]]
	if !ok {
		return fmt.Errorf("%w: unknown agent command %q (run 'switchyard help agent' for the list)", errUsage, args[0])
	}
	return sub(ctx, args[1:], stdout, stderr)
}

func (e agentEnv) commands() map[string]command {
	return map[string]command{
		"serve": e.serve, "dev": e.dev, "invoke": e.invoke,
		"create": e.create, "verify-local": e.verifyLocal, "cleanup": e.cleanup,
	}
}

// agentCommandName returns "agent <sub>" for a known agent subcommand in
// args (the words after "agent"), else "agent".
func agentCommandName(args []string) string {
	if len(args) > 0 {
		if _, ok := (agentEnv{}).commands()[args[0]]; ok {
			return "agent " + args[0]
		}
	}
	return "agent"
}

// serveFlagValues are the flags of agent serve, which dev passes on.
type serveFlagValues struct {
	fs      *flag.FlagSet
	address string
	level   string
	s       agent.Settings
}

// addServeFlags declares the runtime's flags on fs.
func addServeFlags(fs *flag.FlagSet) *serveFlagValues {
	f := &serveFlagValues{fs: fs}
	fs.StringVar(&f.address, "address", defaultAgentAddress, "listen at `HOST:PORT` (the contract's port is 8080; in a container, 0.0.0.0:8080)")
	fs.StringVar(&f.level, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.StringVar(&f.s.Course, "course", "", "the `course`: a built-in one ("+joinCourses()+") or a course folder; default $"+agent.EnvCourse+", else "+agent.DefaultCourse)
	fs.StringVar(&f.s.Endpoint, "endpoint", "", "the small model's endpoint `name`; default $"+agent.EnvEndpoint)
	fs.StringVar(&f.s.TargetModel, "target-model", "", "TargetModel `name` on a multi-model endpoint; default $"+agent.EnvTargetModel)
	fs.IntVar(&f.s.MaxRounds, "max-rounds", agent.DefaultMaxRounds, "the most reasoning-model `calls` per invocation (2 or more)")
	fs.DurationVar(&f.s.Timeout, "timeout", agent.DefaultTimeout, "the longest one invocation may take")
	return f
}

// args returns the flags that were set, for the runtime dev starts.
func (f *serveFlagValues) args() []string {
	var out []string
	f.fs.Visit(func(fl *flag.Flag) {
		if fl.Name != "pid-file" && fl.Name != "log-file" && fl.Name != "wait" {
			out = append(out, "--"+fl.Name+"="+fl.Value.String())
		}
	})
	return out
}

func joinCourses() string { return strings.Join(agent.BuiltinCourses(), ", ") }

const agentServeSummary = `Runs the agent runtime until SIGINT or SIGTERM. The reasoning model is
$REASONING_MODEL_ID (required; with its inference-profile prefix), in
$REASONING_REGION (default $CLOUD_REGION); the tool's endpoint is in
$CLOUD_REGION. Credentials and endpoint overrides
(AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME) come
from the AWS SDK's usual environment and files.`

// serve runs the runtime in the foreground.
func (e agentEnv) serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agent serve", "[flags]", agentServeSummary)
	f := addServeFlags(fs)
	if _, err := parseArgs(fs, args, stdout, stderr, 0, ""); err != nil {
		return err
	}
	cfg, err := agent.LoadConfig(f.s, e.getenv)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, f.level)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	defer func() { _ = log.Sync() }()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := e.runAgent(ctx, cfg, f.address, log, stderr); err != nil {
		log.Error("agent stopped", zap.Error(err))
		return err
	}
	return nil
}

// runAgent wires the two clients, the loop and the server, and serves
// until ctx ends.
func (e agentEnv) runAgent(ctx context.Context, cfg agent.Config, address string, log *zap.Logger, stderr io.Writer) error {
	if w := agent.ModelIDWarning(cfg.ModelID); w != "" {
		log.Warn(w)
	}
	planner, endpoint, err := newClients(ctx, cfg)
	if err != nil {
		return err
	}
	if e.getenv(envNoticeShown) == "" {
		fmt.Fprint(stderr, billable(planner.Options(), endpoint.Options(), cfg).Notice("Ctrl-C, or SIGTERM to this process"))
	}
	a := &agent.Agent{Planner: planner, ModelID: cfg.ModelID, MaxRounds: cfg.MaxRounds, Log: log,
		Tool: agent.Tool{API: endpoint, Endpoint: cfg.Endpoint, TargetModel: cfg.TargetModel, Course: cfg.Course}}
	srv := agent.NewServer(agent.ServerConfig{Runner: a, Timeout: cfg.Timeout, Log: log})
	if err := srv.Listen(address); err != nil {
		return err
	}
	log.Info("switchyard agent listening", zap.String("address", srv.Addr()), zap.String("version", versionString()),
		zap.String("model", cfg.ModelID), zap.String("reasoning_region", planner.Options().Region),
		zap.String("endpoint", cfg.Endpoint), zap.String("target_model", cfg.TargetModel),
		zap.String("course", cfg.Course.Name), zap.String("tool", cfg.Course.Tool),
		zap.String("bedrock_runtime", endpointOf(planner.Options().BaseEndpoint)),
		zap.String("sagemaker_runtime", endpointOf(endpoint.Options().BaseEndpoint)))
	return srv.Serve(ctx)
}

// newClients returns the runtime's two clients: Bedrock Runtime for the
// reasoning model, SageMaker Runtime for the tool's endpoint.
func newClients(ctx context.Context, cfg agent.Config) (*bedrockruntime.Client, *sagemakerruntime.Client, error) {
	planner, err := agent.NewPlannerClient(ctx, cfg.ReasoningRegion)
	if err != nil {
		return nil, nil, err
	}
	endpoint, err := agent.NewEndpointClient(ctx, cfg.CloudRegion)
	if err != nil {
		return nil, nil, err
	}
	return planner, endpoint, nil
}

// endpointOf names where a client's calls go.
func endpointOf(base *string) string {
	if base == nil || *base == "" {
		return "AWS"
	}
	return *base
}

// billable names the cloud resources a runtime with these clients reaches.
func billable(planner bedrockruntime.Options, endpoint sagemakerruntime.Options, cfg agent.Config) agent.Billable {
	var b agent.Billable
	if agent.InCloud(planner.BaseEndpoint) {
		b.ModelID, b.ModelRegion = cfg.ModelID, planner.Region
	}
	if agent.InCloud(endpoint.BaseEndpoint) {
		b.Endpoint, b.EndpointRegion = cfg.Endpoint, endpoint.Region
	}
	return b
}

// waitFor polls cond every 50 ms until it holds or limit passes.
func waitFor(ctx context.Context, limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
