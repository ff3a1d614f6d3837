package frontend

import (
	"bytes"
)

// route names one entry of the route tables.
type route uint8

const (
	routeNone route = iota
	// inference table
	routeInvocations // POST /invocations
	routeInvoke      // POST /models/{name}/invoke
	routePredict     // POST /predictions/{name}[/{version}]
	routeChat        // POST /v1/chat/completions
	routeV1Models    // GET /v1/models
	routeV1Model     // GET /v1/models/{name}
	routePing        // GET /ping
	routeLive        // GET /v2/health/live
	routeReady       // GET /v2/health/ready
	// the AWS runtime APIs (aws.go)
	routeSMInvoke       // POST /endpoints/{name}/invocations
	routeSMStream       // POST /endpoints/{name}/invocations-response-stream
	routeConverse       // POST /model/{modelId}/converse
	routeConverseStream // POST /model/{modelId}/converse-stream
	// management table
	routeModels  // GET, POST /models
	routeModel   // GET, PUT, DELETE /models/{name}
	routeMetrics // GET /metrics
)

// plane is a route table; a listener serves one or both.
type plane uint8

const (
	planeInference plane = 1 << iota
	planeManagement
)

// method is a bit set of HTTP methods.
type method uint8

const (
	methodGet method = 1 << iota
	methodHead
	methodPost
	methodPut
	methodDelete
	methodOther
)

// routeSpec is what the tables know about a route.
type routeSpec struct {
	plane   plane
	methods method
	allow   string
}

var routeSpecs = [...]routeSpec{
	routeInvocations: {planeInference, methodPost, "POST"},
	routeInvoke:      {planeInference, methodPost, "POST"},
	routePredict:     {planeInference, methodPost, "POST"},
	routeChat:        {planeInference, methodPost, "POST"},
	routeV1Models:    {planeInference, methodGet | methodHead, "GET, HEAD"},
	routeV1Model:     {planeInference, methodGet | methodHead, "GET, HEAD"},
	routePing:        {planeInference, methodGet | methodHead, "GET, HEAD"},
	routeLive:        {planeInference, methodGet | methodHead, "GET, HEAD"},
	routeReady:       {planeInference, methodGet | methodHead, "GET, HEAD"},
	routeModels:      {planeManagement, methodGet | methodHead | methodPost, "GET, HEAD, POST"},
	routeModel:       {planeManagement, methodGet | methodHead | methodPut | methodDelete, "GET, HEAD, PUT, DELETE"},
	routeMetrics:     {planeManagement, methodGet | methodHead, "GET, HEAD"},

	routeSMInvoke:       {planeInference, methodPost, "POST"},
	routeSMStream:       {planeInference, methodPost, "POST"},
	routeConverse:       {planeInference, methodPost, "POST"},
	routeConverseStream: {planeInference, methodPost, "POST"},
}

// inferenceRoute reports whether r sends a request to a model.
func (r route) inferenceRoute() bool {
	switch r {
	case routeInvocations, routeInvoke, routePredict, routeChat,
		routeSMInvoke, routeSMStream, routeConverse, routeConverseStream:
		return true
	}
	return false
}

// parseMethod maps a request method to its bit.
func parseMethod(m []byte) method {
	switch string(m) {
	case "GET":
		return methodGet
	case "HEAD":
		return methodHead
	case "POST":
		return methodPost
	case "PUT":
		return methodPut
	case "DELETE":
		return methodDelete
	}
	return methodOther
}

// pathArgs are the variable segments of a matched path.
type pathArgs struct {
	name, version []byte
}

const maxSegments = 4

// splitPath cuts a path into at most maxSegments segments; ok is false when
// it has more or an empty one. One trailing slash is ignored.
func splitPath(path []byte) (segs [maxSegments][]byte, n int, ok bool) {
	path = bytes.TrimPrefix(path, []byte{'/'})
	if len(path) > 0 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	for len(path) > 0 {
		if n == maxSegments {
			return segs, 0, false
		}
		seg, rest, _ := bytes.Cut(path, []byte{'/'})
		if len(seg) == 0 {
			return segs, 0, false
		}
		segs[n], n, path = seg, n+1, rest
	}
	return segs, n, n > 0
}

// matchRoute finds the route of path, with its name and version segments.
func matchRoute(path []byte) (route, pathArgs) {
	segs, n, ok := splitPath(path)
	if !ok {
		return routeNone, pathArgs{}
	}
	switch string(segs[0]) {
	case "invocations":
		return only(n == 1, routeInvocations), pathArgs{}
	case "ping":
		return only(n == 1, routePing), pathArgs{}
	case "metrics":
		return only(n == 1, routeMetrics), pathArgs{}
	case "models":
		return matchModels(segs, n)
	case "predictions":
		return only(n == 2 || n == 3, routePredict), pathArgs{name: segs[1], version: segs[2]}
	case "v1":
		return matchV1(segs, n)
	case "v2":
		return matchHealth(segs, n), pathArgs{}
	case "endpoints":
		return matchEndpoint(segs, n)
	case "model":
		return matchConverse(path, segs, n)
	}
	return routeNone, pathArgs{}
}

// matchEndpoint matches SageMaker Runtime's /endpoints/{name}/... routes.
func matchEndpoint(segs [maxSegments][]byte, n int) (route, pathArgs) {
	if n != 3 {
		return routeNone, pathArgs{}
	}
	switch string(segs[2]) {
	case "invocations":
		return routeSMInvoke, pathArgs{name: segs[1]}
	case "invocations-response-stream":
		return routeSMStream, pathArgs{name: segs[1]}
	}
	return routeNone, pathArgs{}
}

// matchConverse matches Bedrock Runtime's /model/{modelId}/converse and
// /converse-stream. The model id is everything between, slashes included:
// an ARN's "%2F" arrives decoded.
func matchConverse(path []byte, segs [maxSegments][]byte, n int) (route, pathArgs) {
	if n < 3 {
		return routeNone, pathArgs{}
	}
	var r route
	switch string(segs[n-1]) {
	case "converse":
		r = routeConverse
	case "converse-stream":
		r = routeConverseStream
	default:
		return routeNone, pathArgs{}
	}
	id := bytes.TrimPrefix(bytes.TrimSuffix(bytes.TrimSuffix(path, []byte{'/'}), segs[n-1]), []byte("/model/"))
	return r, pathArgs{name: bytes.TrimSuffix(id, []byte{'/'})}
}

func matchModels(segs [maxSegments][]byte, n int) (route, pathArgs) {
	switch {
	case n == 1:
		return routeModels, pathArgs{}
	case n == 2:
		return routeModel, pathArgs{name: segs[1]}
	case n == 3 && string(segs[2]) == "invoke":
		return routeInvoke, pathArgs{name: segs[1]}
	}
	return routeNone, pathArgs{}
}

// matchV1 matches the OpenAI routes under /v1.
func matchV1(segs [maxSegments][]byte, n int) (route, pathArgs) {
	switch {
	case n == 3 && string(segs[1]) == "chat" && string(segs[2]) == "completions":
		return routeChat, pathArgs{}
	case n == 2 && string(segs[1]) == "models":
		return routeV1Models, pathArgs{}
	case n == 3 && string(segs[1]) == "models":
		return routeV1Model, pathArgs{name: segs[2]}
	}
	return routeNone, pathArgs{}
}

func matchHealth(segs [maxSegments][]byte, n int) route {
	if n != 3 || string(segs[1]) != "health" {
		return routeNone
	}
	switch string(segs[2]) {
	case "live":
		return routeLive
	case "ready":
		return routeReady
	}
	return routeNone
}

// only returns r when cond holds, else routeNone.
func only(cond bool, r route) route {
	if cond {
		return r
	}
	return routeNone
}
