package agent

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The environment variables the agent reads. Endpoint names, model ids,
// accounts and secrets come only from the environment or flags; nothing
// is built in.
const (
	// EnvModelID names the reasoning model; required, never defaulted.
	EnvModelID = "REASONING_MODEL_ID"
	// EnvReasoningRegion is the reasoning model's region; default CLOUD_REGION.
	EnvReasoningRegion = "REASONING_REGION"
	// EnvCloudRegion is the endpoint's region, and the default of the above.
	EnvCloudRegion = "CLOUD_REGION"
	// EnvEndpoint names the small model's endpoint.
	EnvEndpoint = "SLM_ENDPOINT_NAME"
	// EnvTargetModel names the model on a multi-model endpoint (optional).
	EnvTargetModel = "SLM_TARGET_MODEL"
	// EnvCourse names the course (a built-in one or a folder).
	EnvCourse = "AGENT_COURSE"
)

// Defaults of the runtime's limits.
const (
	DefaultMaxRounds = 6
	DefaultTimeout   = 5 * time.Minute
)

// ProfilePrefixes are the inference-profile prefixes of a reasoning model
// id (regional routing); current reasoning models are mostly reachable only
// through such a profile.
var ProfilePrefixes = []string{"us.", "eu.", "apac.", "global."}

// ErrConfig means the agent's configuration is incomplete or wrong.
var ErrConfig = errors.New("agent: configuration")

// Config is what one agent runtime needs to know.
type Config struct {
	ModelID         string        // the reasoning model (REASONING_MODEL_ID)
	ReasoningRegion string        // its region (REASONING_REGION, else CLOUD_REGION)
	CloudRegion     string        // the endpoint's region (CLOUD_REGION)
	Endpoint        string        // the small model's endpoint (SLM_ENDPOINT_NAME)
	TargetModel     string        // the model on a multi-model endpoint (SLM_TARGET_MODEL)
	Course          Course        // the tool
	MaxRounds       int           // the most reasoning-model calls per invocation
	Timeout         time.Duration // the longest one invocation may take
}

// Settings are the values a command line gives; empty ones are taken from
// the environment.
type Settings struct {
	Course      string
	Endpoint    string
	TargetModel string
	MaxRounds   int
	Timeout     time.Duration
}

// LoadConfig builds the runtime's Config from s and the environment, and
// fails at once, naming the variable, when the reasoning model or the
// endpoint is not set.
func LoadConfig(s Settings, getenv func(string) string) (Config, error) {
	c := Config{
		ModelID:     strings.TrimSpace(getenv(EnvModelID)),
		CloudRegion: getenv(EnvCloudRegion),
		Endpoint:    firstOf(s.Endpoint, getenv(EnvEndpoint)),
		TargetModel: firstOf(s.TargetModel, getenv(EnvTargetModel)),
		MaxRounds:   s.MaxRounds,
		Timeout:     s.Timeout,
	}
	c.ReasoningRegion = firstOf(getenv(EnvReasoningRegion), c.CloudRegion)
	if c.ModelID == "" {
		return Config{}, fmt.Errorf("%w: %s is not set: give the reasoning model's id, with its inference-profile prefix (%s), e.g. %s=us.<model id>; no model is built in",
			ErrConfig, EnvModelID, strings.Join(ProfilePrefixes, ", "), EnvModelID)
	}
	if c.Endpoint == "" {
		return Config{}, fmt.Errorf("%w: %s is not set (nor --endpoint): give the small model's endpoint name", ErrConfig, EnvEndpoint)
	}
	if err := c.limits(); err != nil {
		return Config{}, err
	}
	course, err := LoadCourse(firstOf(s.Course, getenv(EnvCourse), DefaultCourse))
	if err != nil {
		return Config{}, err
	}
	c.Course = course
	return c, nil
}

// limits fills in and checks the round bound and the timeout.
func (c *Config) limits() error {
	if c.MaxRounds == 0 {
		c.MaxRounds = DefaultMaxRounds
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRounds < 2 {
		return fmt.Errorf("%w: the round bound is %d: it must allow a tool call and the answer after it (2 or more)", ErrConfig, c.MaxRounds)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("%w: the timeout %v is negative", ErrConfig, c.Timeout)
	}
	return nil
}

// ModelIDWarning returns why a reasoning model id may be rejected, or ""
// when it carries an inference-profile prefix (or is an ARN).
func ModelIDWarning(id string) string {
	if strings.HasPrefix(id, "arn:") {
		return ""
	}
	for _, p := range ProfilePrefixes {
		if strings.HasPrefix(id, p) {
			return ""
		}
	}
	return fmt.Sprintf("%s %q has no inference-profile prefix (%s): current reasoning models are mostly called through a cross-region inference profile, and the call may be rejected",
		EnvModelID, id, strings.Join(ProfilePrefixes, ", "))
}

// firstOf returns the first non-empty value.
func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
