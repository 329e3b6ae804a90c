"""Networking every tool shares: one HTTP layer with its deadline, guards, proxies and TLS."""
