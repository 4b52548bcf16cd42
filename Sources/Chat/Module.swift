// The Chat module; see DESIGN.md for its role.
