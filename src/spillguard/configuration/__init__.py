"""Files to one resolved Config: built-in rules, the layers of files, the synced cache."""
