"""The model bridge: an OpenAI-compatible endpoint per attempt that relays an agent's model calls
to the configured provider, recording each (bridge/server.py); and the relay that makes it
reachable inside a sandbox without network (bridge/relay.py)."""
