// The RemoteFiles module; see DESIGN.md for its role.
