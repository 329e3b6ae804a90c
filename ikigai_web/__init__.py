"""ikigai-web-tools: web search and fetch tools for LLM agents (see README.md, "Layout")."""
