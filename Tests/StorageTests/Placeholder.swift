// Tests for Storage arrive with the module.
