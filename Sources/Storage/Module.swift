// The Storage module; see DESIGN.md for its role.
