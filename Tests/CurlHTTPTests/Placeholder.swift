// Tests for CurlHTTP arrive with the module.
