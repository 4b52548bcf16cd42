// The AgentTracing module; see DESIGN.md for its role.
