"""Fetching, guarding and decoding helpers for the web-fetch tool."""
