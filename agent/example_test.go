package agent_test

import (
	"fmt"

	"github.com/switchyard/switchyard/agent"
)

func ExampleLoadCourse() {
	c, err := agent.LoadCourse("classification")
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Tool, c.MaxTokens)
	// Output: classify_language 256
}

func ExampleTool_Body() {
	c, _ := agent.LoadCourse("classification")
	t := agent.Tool{Endpoint: "langid", Course: c}
	fmt.Println(string(t.Body("Guten Morgen")))
	// Output: {"messages":[{"role":"system","content":"Name the language of the user's text: its English name and its ISO 639-3 code, for example French (fra)."},{"role":"user","content":"Guten Morgen"}],"max_tokens":256,"temperature":0.1}
}

func ExampleValidName() {
	fmt.Println(agent.ValidName("Invoices2024"))
	fmt.Println(agent.ValidName("my-agent"))
	// Output:
	// <nil>
	// agent: name "my-agent": only letters and digits are allowed
}
