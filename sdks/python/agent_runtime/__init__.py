"""The agent-runtime client library; its hand-written layer sits over `_generated`."""
