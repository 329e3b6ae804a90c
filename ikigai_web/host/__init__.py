"""`web-tools`: the host side. It reaches every tool the way an ikigai host does, as a program.

Nothing here imports a tool module: a tool is an executable found on disk, asked for its
schema with `--schema` and called with JSON on stdin (protocol.md, section 1), so tools of
this project and third-party tools are treated alike. One process is the exception: the MCP
server's warm worker (ikigai_web/host/warm.py, a program of its own) imports this installation's own
tools to run their calls without starting a new interpreter for each (ikigai_web/host/workers.py).
"""
