// The CurlHTTP module; see DESIGN.md for its role.
