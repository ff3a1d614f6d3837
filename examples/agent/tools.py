"""tools: the small model's four courses as Strands tools, one call of the endpoint per use.

Each tool sends the course's system prompt and the text the reasoning model
passed, in the chat schema, with the course's max_tokens (256 for
extraction and classification, 512 for summarization and domain QA) and
temperature 0.1, to the endpoint SLM_ENDPOINT_NAME (with SLM_TARGET_MODEL on
a multi-model endpoint), and returns the small model's text. The small
model only returns text; judging it is the reasoning model's job.

The prompts, descriptions and limits are the Go agent's built-in courses'
(agent/courses/*/course.json); e2e/agent_python_test.go keeps them equal.
"""

import os

from strands import tool

import shared

# COURSES: per course, its tool's name, the system prompt the small model was
# fine-tuned with, and its max_tokens.
COURSES = {
    "extraction": {
        "tool": "extract_structured_json", "max_tokens": 256,
        "system_prompt": ("You extract structured information from the user's text. Answer with one JSON object"
                          " and nothing else. Use null for a field the text does not state."),
    },
    "classification": {
        "tool": "classify_language", "max_tokens": 256,
        "system_prompt": ("Name the language of the user's text: its English name and its ISO 639-3 code, for "
                          "example French (fra)."),
    },
    "summarization": {
        "tool": "summarize_text", "max_tokens": 512,
        "system_prompt": ("Summarize the user's text in a few sentences. Keep names, numbers and dates exactly "
                          "as the text gives them, and add nothing the text does not say."),
    },
    "qa": {
        "tool": "answer_domain_question", "max_tokens": 512,
        "system_prompt": ("Answer the user's question about your domain briefly and exactly. If the question or"
                          " its text does not give you the answer, say that you do not know."),
    },
}


def call_course(course, text):
    """Calls the course's small model once with text and returns its answer."""
    c = COURSES[course]
    endpoint = os.environ.get("SLM_ENDPOINT_NAME")
    if not endpoint:
        raise RuntimeError("SLM_ENDPOINT_NAME is not set: name the small model's endpoint")
    return shared.invoke_endpoint_chat(endpoint, c["system_prompt"], text, max_tokens=c["max_tokens"],
                                       temperature=shared.TOOL_TEMPERATURE,
                                       target_model=os.environ.get("SLM_TARGET_MODEL") or None)


@tool
def extract_structured_json(text: str) -> str:
    """Extracts structured data from a free text and returns it as one JSON object. Use it when the
    user asks to pull fields, names, dates, amounts or other facts out of a text into a
    structured form. Pass the whole text to extract from as text. The answer comes from a small
    fine-tuned model: check it against the text before you rely on it.

    Args:
        text: the text to pass to the small model
    """
    return call_course("extraction", text)


@tool
def classify_language(text: str) -> str:
    """Names the language a text is written in, in words and as an ISO 639-3 code, for example
    "German (deu)"; it knows 50 languages. Use it when the user asks which language a text is
    in. Pass the text as text. It answers only the language: check that the answer fits the
    text.

    Args:
        text: the text to pass to the small model
    """
    return call_course("classification", text)


@tool
def summarize_text(text: str) -> str:
    """Summarizes a text in a few sentences: who did what, when and where, with the text's own
    names, numbers and dates. Use it when the user asks for a summary, a gist or a shorter
    version of a text. Pass the whole text to summarize as text. The summary comes from a small
    fine-tuned model: check it against the text before you rely on it.

    Args:
        text: the text to pass to the small model
    """
    return call_course("summarization", text)


@tool
def answer_domain_question(text: str) -> str:
    """Answers a question about the domain its small model was fine-tuned on, briefly, and says
    when it does not know. Use it when the user asks a factual question about that domain. Pass
    the question, with any text it is about, as text. The answer comes from a small fine-tuned
    model: check that it answers the question before you rely on it.

    Args:
        text: the text to pass to the small model
    """
    return call_course("qa", text)


TOOLS = {
    "extraction": extract_structured_json,
    "classification": classify_language,
    "summarization": summarize_text,
    "qa": answer_domain_question,
}


def course_tool(course=None):
    """Returns the tool of the course AGENT_COURSE names (default extraction)."""
    course = course or os.environ.get("AGENT_COURSE") or "extraction"
    if course not in TOOLS:
        raise SystemExit("AGENT_COURSE=%s is not a course: use one of %s" % (course, ", ".join(sorted(TOOLS))))
    return TOOLS[course]
