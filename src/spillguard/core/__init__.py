"""The foundation every layer stands on: domain values, errors, exit codes, small I/O helpers."""
