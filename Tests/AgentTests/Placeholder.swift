// Tests for Agent arrive with the module.
