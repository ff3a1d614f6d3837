package agent

import (
	"fmt"
	"strings"
)

// Billable names the cloud resources a command reaches: the reasoning
// model (billed per token) and the small model's endpoint (billed per
// instance hour for as long as it exists). An empty name is not reached,
// or not in the cloud.
type Billable struct {
	ModelID, ModelRegion     string
	Endpoint, EndpointRegion string
}

// Notice returns what bills and how to stop it, or "" when nothing does.
func (b Billable) Notice(stop string) string {
	if b.ModelID == "" && b.Endpoint == "" {
		return ""
	}
	var s strings.Builder
	s.WriteString("Cloud costs: this command reaches billable AWS resources.\n")
	if b.ModelID != "" {
		fmt.Fprintf(&s, "  - the reasoning model %s in %s (Bedrock Runtime): billed per input and output token of every call; nothing stands when no call runs.\n",
			b.ModelID, b.ModelRegion)
	}
	if b.Endpoint != "" {
		fmt.Fprintf(&s, "  - the endpoint %s in %s (SageMaker Runtime): billed per instance hour for as long as it exists, called or not.\n",
			b.Endpoint, b.EndpointRegion)
	}
	if stop != "" {
		fmt.Fprintf(&s, "To stop the agent: %s.\n", stop)
	}
	if b.Endpoint != "" {
		fmt.Fprintf(&s, "The endpoint bills until it is deleted (switchyard never creates or deletes one): aws sagemaker delete-endpoint --endpoint-name %s --region %s\n",
			b.Endpoint, b.EndpointRegion)
	}
	return s.String()
}
