// Tests for CLI arrive with the module.
