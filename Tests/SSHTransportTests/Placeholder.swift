// Tests for SSHTransport arrive with the module.
