package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"
)

// PlannerAPI is the part of the Bedrock Runtime client the loop uses: the
// reasoning model is called through Converse and ConverseStream only.
// *bedrockruntime.Client implements it.
type PlannerAPI interface {
	Converse(ctx context.Context, in *bedrockruntime.ConverseInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
	ConverseStream(ctx context.Context, in *bedrockruntime.ConverseStreamInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseStreamOutput, error)
}

// EndpointAPI is the part of the SageMaker Runtime client the tool uses:
// the small model is called through InvokeEndpoint only.
// *sagemakerruntime.Client implements it.
type EndpointAPI interface {
	InvokeEndpoint(ctx context.Context, in *sagemakerruntime.InvokeEndpointInput, opts ...func(*sagemakerruntime.Options)) (*sagemakerruntime.InvokeEndpointOutput, error)
}

// NewPlannerClient returns a Bedrock Runtime client for region. Like every
// AWS SDK client it takes its credentials, and an endpoint override
// (AWS_ENDPOINT_URL_BEDROCK_RUNTIME), from the environment and the shared
// configuration files.
func NewPlannerClient(ctx context.Context, region string) (*bedrockruntime.Client, error) {
	cfg, err := loadAWS(ctx, region, EnvReasoningRegion+" or "+EnvCloudRegion)
	if err != nil {
		return nil, err
	}
	return bedrockruntime.NewFromConfig(cfg), nil
}

// NewEndpointClient returns a SageMaker Runtime client for region, set up
// as NewPlannerClient's (its override: AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME).
func NewEndpointClient(ctx context.Context, region string) (*sagemakerruntime.Client, error) {
	cfg, err := loadAWS(ctx, region, EnvCloudRegion)
	if err != nil {
		return nil, err
	}
	return sagemakerruntime.NewFromConfig(cfg), nil
}

// loadAWS reads the SDK's shared configuration with region (when set),
// and sends its requests through plainBodies; a missing region is an
// error naming what sets it.
func loadAWS(ctx context.Context, region, names string) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("%w: the AWS SDK's configuration: %w", ErrConfig, err)
	}
	if cfg.Region == "" {
		return aws.Config{}, fmt.Errorf("%w: no region: set %s (or AWS_REGION)", ErrConfig, names)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = awshttp.NewBuildableClient()
	}
	cfg.HTTPClient = plainBodies{cfg.HTTPClient}
	return cfg, nil
}

// plainBodies sends each request with a body that hides its WriteTo
// method. It works around a race in the AWS SDK for Go
// (aws/aws-sdk-go-v2#2737): the SDK closes a request's body as soon as the
// answer's headers arrive; Go's transport, still finishing the request,
// then calls the body's WriteTo once more, takes its io.EOF for an error
// and closes the connection under the answer, so that about one stream in
// a hundred from a server that answers within microseconds (a local
// switchyard) breaks with "use of closed network connection". Read through
// io.Copy instead, the finished body ends with a clean io.EOF.
type plainBodies struct{ next aws.HTTPClient }

// Do sends r through the wrapped client.
func (p plainBodies) Do(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return p.next.Do(r)
	}
	out := r.Clone(r.Context())
	out.Body = struct{ io.ReadCloser }{r.Body}
	return p.next.Do(out)
}

// InCloud reports whether calls to base reach AWS itself: no endpoint
// override, or one on an AWS domain. A local switchyard is not the cloud.
func InCloud(base *string) bool {
	if base == nil || *base == "" {
		return true
	}
	u, err := url.Parse(*base)
	if err != nil {
		return true
	}
	host := strings.ToLower(u.Hostname())
	for _, domain := range []string{".amazonaws.com", ".amazonaws.com.cn", ".api.aws"} {
		if strings.HasSuffix(host, domain) {
			return true
		}
	}
	return false
}
