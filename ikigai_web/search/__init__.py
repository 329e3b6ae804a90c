"""The search kit: what every search tool shares, its domain filters, provider declarations and
pacing."""
