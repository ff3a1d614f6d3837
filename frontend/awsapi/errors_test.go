package awsapi

import "testing"

func TestErrors(t *testing.T) {
	model := Failure{Kind: KindModel, Status: 424, Message: "bad input", OriginalStatus: 400,
		OriginalMessage: `{"error":"bad input"}`, Resource: "chat"}
	crash := Failure{Kind: KindModel, Status: 424, Message: "boom", OriginalStatus: 424, OriginalMessage: "boom", Resource: "chat"}
	tests := []struct {
		name     string
		f        Failure
		sm, br   string
		smS, brS int
		smB, brB string
	}{
		{"handler 400", model, "ModelError", "ValidationException", 424, 400,
			`{"Message":"Received client error (400) from model \"chat\" with message \"bad input\".","OriginalStatusCode":400,"OriginalMessage":"{\"error\":\"bad input\"}"}`,
			`{"message":"bad input"}`},
		{"handler 424", crash, "ModelError", "ModelErrorException", 424, 424,
			`{"Message":"Received client error (424) from model \"chat\" with message \"boom\".","OriginalStatusCode":424,"OriginalMessage":"boom"}`,
			`{"message":"boom","originalStatusCode":424,"resourceName":"chat"}`},
		{"bad request", Failure{Kind: KindInvalid, Status: 400, Message: "no"}, "ValidationError", "ValidationException", 400, 400,
			`{"Message":"no"}`, `{"message":"no"}`},
		{"unknown model", Failure{Kind: KindNotFound, Status: 404, Message: "model not found: x"}, "ValidationError",
			"ResourceNotFoundException", 400, 404, `{"Message":"model not found: x"}`, `{"message":"model not found: x"}`},
		{"queue full", Failure{Kind: KindThrottled, Status: 503, Message: "queue full"}, "ThrottlingException",
			"ThrottlingException", 503, 429, `{"Message":"queue full"}`, `{"message":"queue full"}`},
		{"not ready", Failure{Kind: KindUnavailable, Status: 503, Message: "loading"}, "ServiceUnavailable",
			"ServiceUnavailableException", 503, 503, `{"Message":"loading"}`, `{"message":"loading"}`},
		{"timeout", Failure{Kind: KindTimeout, Status: 500, Message: "slow"}, "InternalFailure", "ModelTimeoutException",
			500, 408, `{"Message":"slow"}`, `{"message":"slow"}`},
		{"other", Failure{Kind: KindInternal, Status: 500, Message: "?"}, "InternalFailure", "InternalServerException",
			500, 500, `{"Message":"?"}`, `{"message":"?"}`},
		{"no route", Failure{Kind: KindNoRoute, Status: 405, Message: "GET"}, "UnknownOperationException",
			"UnknownOperationException", 405, 405, `{"Message":"GET"}`, `{"message":"GET"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm, br := SageMakerError(tt.f), BedrockError(tt.f)
			if sm.Code != tt.sm || sm.Status != tt.smS || string(sm.Body) != tt.smB {
				t.Errorf("SageMaker: %d %s %s, want %d %s %s", sm.Status, sm.Code, sm.Body, tt.smS, tt.sm, tt.smB)
			}
			if br.Code != tt.br || br.Status != tt.brS || string(br.Body) != tt.brB {
				t.Errorf("Bedrock: %d %s %s, want %d %s %s", br.Status, br.Code, br.Body, tt.brS, tt.br, tt.brB)
			}
		})
	}
}
