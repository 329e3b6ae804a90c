"""Helpers shared by test_web_search_gemini.py and test_web_search_gemini_calls.py."""

from __future__ import annotations

from typing import Any

from ikigai_web.tools import web_search_gemini as gem

TOOL = "web-search-gemini-tool"
KEY = "AIzaSyGEMINI-LEAKCANARY-5f2e9d41c7"  # distinctive: must never appear in any output
BASE = "https://generativelanguage.googleapis.com/v1beta"
API = f"{BASE}/models/{gem.DEFAULT_MODEL}:generateContent"
REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect"
ALJAZEERA = "https://www.aljazeera.com/sports/2024/7/14/spain-beat-england-to-win-euro-2024"
UEFA = "https://www.uefa.com/euro2024/news/0290-1bbd8a8e5b6b-spain-england-report/"
FIRST = "Spain won Euro 2024, defeating England 2-1 in the final."
SECOND = "This victory marks Spain's record fourth European Championship title."
ENTRY = (
    '<style>.container { align-items: center; }</style><div class="container">'
    '<a class="chip" href="https://www.google.com/search?q=who+won+euro+2024">who won euro '
    "2024</a></div>"
)


def chunk(uri: str, title: Any) -> dict[str, Any]:
    return {"web": {"uri": uri, "title": title}}


def support(text: str, start: int | None, end: int, *indices: int) -> dict[str, Any]:
    # proto3 JSON leaves out a zero startIndex, as the real answers do.
    segment: dict[str, Any] = {"endIndex": end, "text": text}
    if start:
        segment["startIndex"] = start
    return {"segment": segment, "groundingChunkIndices": list(indices)}


def grounded(
    redirect: str = REDIRECT,
    *,
    chunks: list[Any] | None = None,
    supports: list[Any] | None = None,
    text: str = f"{FIRST} {SECOND}",
) -> dict[str, Any]:
    """A generateContent answer with grounding, shaped like the example of Google's "Grounding
    with Google Search" guide (ai.google.dev/gemini-api/docs/google-search)."""
    if chunks is None:
        chunks = [chunk(f"{redirect}/AUZIYQH1", "aljazeera.com"),
                  chunk(f"{redirect}/AUZIYQG2", "uefa.com")]  # fmt: skip
    if supports is None:
        supports = [support(FIRST, None, 56, 0), support(SECOND, 57, 129, 0, 1)]
    return {
        "candidates": [
            {
                "content": {
                    "parts": [{"text": text, "thoughtSignature": "CsYBAdHtim8Q0f3xQ=="}],
                    "role": "model",
                },
                "finishReason": "STOP",
                "index": 0,
                "groundingMetadata": {
                    "webSearchQueries": ["UEFA Euro 2024 winner", "who won euro 2024"],
                    "searchEntryPoint": {"renderedContent": ENTRY},
                    "groundingChunks": chunks,
                    "groundingSupports": supports,
                },
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 8,
            "candidatesTokenCount": 27,
            "totalTokenCount": 117,
            "thoughtsTokenCount": 82,
            "toolUsePromptTokenCount": 95,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 8}],
        },
        "modelVersion": gem.DEFAULT_MODEL,
        "responseId": "mC5xaOfcFqLsz7IPjdfYmQw",
    }


UNGROUNDED: dict[str, Any] = {
    "candidates": [
        {
            "content": {"parts": [{"text": "Hello! How can I help you today?"}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "usageMetadata": {"promptTokenCount": 2, "candidatesTokenCount": 9, "totalTokenCount": 11},
    "modelVersion": gem.DEFAULT_MODEL,
}


RATINGS = [
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "LOW"},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
]


BLOCKED_PROMPT: dict[str, Any] = {
    "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": RATINGS},
    "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12},
    "modelVersion": gem.DEFAULT_MODEL,
}


SAFETY_STOP: dict[str, Any] = {
    "candidates": [{"finishReason": "SAFETY", "index": 0, "safetyRatings": RATINGS}],
    "modelVersion": gem.DEFAULT_MODEL,
}


def status(code: int, state: str, message: str, *details: dict[str, Any]) -> dict[str, Any]:
    """A google.rpc.Status error answer."""
    error: dict[str, Any] = {"code": code, "message": message, "status": state}
    if details:
        error["details"] = list(details)
    return {"error": error}


def error_info(reason: str) -> dict[str, Any]:
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    }


def retry_info(delay: str) -> dict[str, Any]:
    return {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}


KEY_INVALID = status(
    400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
    error_info("API_KEY_INVALID"),
    {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
     "message": "API key not valid. Please pass a valid API key."},
)  # fmt: skip


QUOTA_MESSAGE = (
    "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n"
    "* Quota exceeded for metric: generativelanguage.googleapis.com/"
    "generate_content_free_tier_requests, limit: 10, model: gemini-3.8-flash\n"
    "Please retry in 31.093s."
)


QUOTA = status(
    429, "RESOURCE_EXHAUSTED", QUOTA_MESSAGE,
    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
        {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
         "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
         "quotaDimensions": {"location": "global", "model": "gemini-3.8-flash"},
         "quotaValue": "10"}]},
    {"@type": "type.googleapis.com/google.rpc.Help", "links": [
        {"description": "Learn more about Gemini API quotas",
         "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
    retry_info("31s"),
)  # fmt: skip


SERVICE_DISABLED = status(
    403, "PERMISSION_DENIED",
    "Generative Language API has not been used in project 1234 before or it is disabled.",
    error_info("SERVICE_DISABLED"),
)  # fmt: skip


NOT_FOUND = status(
    404, "NOT_FOUND",
    "models/gemini-9-flash is not found for API version v1beta, or is not supported for "
    "generateContent. Call ListModels to see the list of available models and their supported "
    "methods.",
)  # fmt: skip


def params(**raw: Any) -> gem.Params:
    return gem.parse_input({"query": "who won euro 2024"} | raw)
