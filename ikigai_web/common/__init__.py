"""Shared plumbing for the ikigai web tools: protocol runner, errors, credentials, HTTP."""

__version__ = "0.1.0"
