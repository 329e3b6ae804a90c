"""Helpers of the fallback search tool (web-search-auto-tool)."""
