// Tests for AgentTracing arrive with the module.
